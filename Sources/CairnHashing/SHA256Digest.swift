import COpenSSL

/// An incremental SHA-256 through OpenSSL's EVP interface: what an S3 request's signature and checksum headers
/// carry (the library's identity stays SHA1).
public final class SHA256Digest {
    private let context: OpaquePointer
    nonisolated(unsafe) private static let algorithm: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

    public init() throws(OpenSSLError) {
        context = try require(EVP_MD_CTX_new(), "EVP_MD_CTX_new")
        let algorithm = try require(Self.algorithm, "EVP_MD_fetch(SHA256)")
        try check(EVP_DigestInit_ex(context, algorithm, nil), "EVP_DigestInit_ex")
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) throws(OpenSSLError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        try check(EVP_DigestUpdate(context, base, bytes.count), "EVP_DigestUpdate")
    }

    /// The 32-byte digest; the object is spent after this.
    public func finalize() throws(OpenSSLError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(COpenSSL_EVP_MAX_MD_SIZE()))
        var length: UInt32 = 0
        try check(EVP_DigestFinal_ex(context, &output, &length), "EVP_DigestFinal_ex")
        return Array(output.prefix(Int(length)))
    }

    /// The digest of `bytes` in one call.
    public static func hash(_ bytes: UnsafeRawBufferPointer) throws(OpenSSLError) -> [UInt8] {
        try oneShot("SHA256", bytes)
    }

    public static func hash(_ bytes: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        try bytes.withUnsafeBytes { raw in Result { () throws(OpenSSLError) in try hash(raw) } }.get()
    }

    /// The MD5 of `bytes`: what S3 takes in `Content-MD5` and gives back as a part's ETag (an integrity check
    /// S3 asks for, not an identity).
    public static func md5(_ bytes: UnsafeRawBufferPointer) throws(OpenSSLError) -> [UInt8] {
        try oneShot("MD5", bytes)
    }

    private static func oneShot(_ algorithm: String, _ bytes: UnsafeRawBufferPointer) throws(OpenSSLError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(COpenSSL_EVP_MAX_MD_SIZE()))
        var length = 0
        try check(COpenSSL_digest(algorithm, bytes.baseAddress, bytes.count, &output, &length), "EVP_Q_digest")
        return Array(output.prefix(length))
    }

    /// HMAC-SHA256 of `message` under `key` (Signature Version 4 chains four of these).
    public static func authenticationCode(key: [UInt8], message: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(COpenSSL_EVP_MAX_MD_SIZE()))
        var length = 0
        let status = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                COpenSSL_hmac_sha256(keyBytes.baseAddress, keyBytes.count, messageBytes.baseAddress,
                                     messageBytes.count, &output, &length)
            }
        }
        try check(status, "EVP_Q_mac(HMAC-SHA256)")
        return Array(output.prefix(length))
    }
}

extension Array where Element == UInt8 {
    /// Lower-case hexadecimal, as SigV4 writes digests and signatures.
    public var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(count * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
