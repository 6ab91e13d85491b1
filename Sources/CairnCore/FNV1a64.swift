/// FNV-1a, 64 bits: a few lines, no table, stable by definition. Not for security: it only names things (a tape
/// clip's folder, an archive listing's file, a library's lock in PostgreSQL).
package enum FNV1a64 {
    package static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    package static let prime: UInt64 = 0x0000_0100_0000_01b3

    package static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash = offsetBasis
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= prime
        }
        return hash
    }

    /// The hash of `text`'s UTF-8 bytes as 16 lowercase hex digits.
    package static func hex(of text: String) -> String {
        let digits = String(hash(text.utf8), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
