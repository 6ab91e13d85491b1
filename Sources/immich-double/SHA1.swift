import CairnCore
import COpenSSL
import Foundation

/// SHA1 through OpenSSL's EVP interface, fed chunk by chunk as an upload streams to disk (the same library cairn
/// hashes with, and Immich's server uses for its checksums). One context per upload, freed with it.
final class SHA1 {
    private let context: OpaquePointer

    init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha1(), nil) == 1 else {
            fatalError("OpenSSL cannot make a SHA1 context")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: some Collection<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            _ = EVP_DigestUpdate(context, buffer.baseAddress, buffer.count)
        }
        if handled == nil { Array(bytes).withUnsafeBufferPointer { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) } }
    }

    func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        _ = EVP_DigestFinal_ex(context, &digest, &length)
        return digest
    }
}

/// The two spellings Immich accepts for a SHA1: hex (40 characters, either case) and base64 (28).
enum ChecksumText {
    /// The digest a hex or base64 SHA1 names, or nil when it is neither.
    static func digest(_ text: String) -> [UInt8]? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.utf8.count == 40, let checksum = Checksum(hex: trimmed) { return checksum.bytes }
        if let data = Data(base64Encoded: trimmed), data.count == 20 { return [UInt8](data) }
        return nil
    }
}
