import COpenSSL

/// SHA-256, MD5 and HMAC-SHA256 through OpenSSL's EVP interface: what an S3 request's signature and checksum
/// headers carry (the library's identity stays SHA1).
public enum SHA256Digest {
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
