import COpenSSL
import CMappingGuard
import CairnCore

/// An incremental SHA1 computation through OpenSSL's EVP interface.
///
/// Owns its `EVP_MD_CTX`; reusable across files via `reset()`, so a hashing thread allocates it once.
public final class SHA1Digest {
    private let context: OpaquePointer

    /// The SHA1 implementation, fetched once for the life of the process: an implicit fetch on every
    /// `EVP_DigestInit_ex` costs a lock.
    nonisolated(unsafe) private static let algorithm: OpaquePointer? = EVP_MD_fetch(nil, "SHA1", nil)

    public init() throws(OpenSSLError) {
        context = try require(EVP_MD_CTX_new(), "EVP_MD_CTX_new")
        try reset()
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Starts a new computation, discarding any bytes fed so far.
    public func reset() throws(OpenSSLError) {
        let algorithm = try require(Self.algorithm, "EVP_MD_fetch(SHA1)")
        try check(EVP_DigestInit_ex(context, algorithm, nil), "EVP_DigestInit_ex")
    }

    func update(_ bytes: UnsafeRawBufferPointer) throws(OpenSSLError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        try check(EVP_DigestUpdate(context, base, bytes.count), "EVP_DigestUpdate")
    }

    /// Feeds bytes of a file mapping. Returns false when a page of it was gone (the file shrank while it was
    /// read: the kernel's SIGBUS is caught for this call only); the digest must then be reset.
    func updateMapped(_ bytes: UnsafeRawBufferPointer) throws(OpenSSLError) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
        let result = CMappingGuard_digest_update(context, base, bytes.count)
        if result == -1 { return false }
        try check(result, "EVP_DigestUpdate")
        return true
    }

    public func update(_ bytes: [UInt8]) throws(OpenSSLError) {
        let result: Result<Void, OpenSSLError> = bytes.withUnsafeBytes { raw in
            Result { () throws(OpenSSLError) in try update(raw) }
        }
        try result.get()
    }

    /// Finishes the computation; call `reset()` before feeding more bytes.
    public func finalize() throws(OpenSSLError) -> Checksum {
        var output = [UInt8](repeating: 0, count: Int(COpenSSL_EVP_MAX_MD_SIZE()))
        var length: UInt32 = 0
        try check(EVP_DigestFinal_ex(context, &output, &length), "EVP_DigestFinal_ex")
        guard let checksum = Checksum(bytes: output.prefix(Int(length))) else {
            throw OpenSSLError(operation: "EVP_DigestFinal_ex", message: "digest of \(length) bytes is not SHA1")
        }
        return checksum
    }

    /// SHA1 of bytes in memory.
    public static func checksum(of bytes: [UInt8]) throws(OpenSSLError) -> Checksum {
        let digest = try SHA1Digest()
        try digest.update(bytes)
        return try digest.finalize()
    }
}
