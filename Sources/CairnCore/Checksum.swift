/// The SHA1 of a file's bytes: cairn's identity for content.
///
/// Stored as three integers rather than a `String` so that sets of millions of
/// checksums stay compact and hash quickly.
public struct Checksum: Hashable, Comparable, Sendable {
    public static let byteCount = 20

    private let high: UInt64
    private let middle: UInt64
    private let low: UInt32

    /// Builds a checksum from exactly 20 digest bytes.
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        guard bytes.count == Self.byteCount else { return nil }
        var h: UInt64 = 0, m: UInt64 = 0, l: UInt32 = 0
        for (index, byte) in bytes.enumerated() {
            switch index {
            case 0..<8: h = h << 8 | UInt64(byte)
            case 8..<16: m = m << 8 | UInt64(byte)
            default: l = l << 8 | UInt32(byte)
            }
        }
        high = h; middle = m; low = l
    }

    /// Parses 40 hexadecimal digits (either case).
    public init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == Self.byteCount * 2 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.byteCount)
        var index = 0
        while index < utf8.count {
            guard let hi = Self.nibble(utf8[index]), let lo = Self.nibble(utf8[index + 1]) else { return nil }
            bytes.append(hi << 4 | lo)
            index += 2
        }
        self.init(bytes: bytes)
    }

    public var bytes: [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(Self.byteCount)
        for shift in stride(from: 56, through: 0, by: -8) { result.append(UInt8(truncatingIfNeeded: high >> UInt64(shift))) }
        for shift in stride(from: 56, through: 0, by: -8) { result.append(UInt8(truncatingIfNeeded: middle >> UInt64(shift))) }
        for shift in stride(from: 24, through: 0, by: -8) { result.append(UInt8(truncatingIfNeeded: low >> UInt32(shift))) }
        return result
    }

    /// Lowercase hexadecimal, as `sha1sum` prints it.
    public var hex: String { bytes.lowercaseHex }

    public static func < (lhs: Checksum, rhs: Checksum) -> Bool {
        (lhs.high, lhs.middle, lhs.low) < (rhs.high, rhs.middle, rhs.low)
    }

    /// The value of one hex digit (either case), or nil for any other byte.
    package static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension Checksum: CustomStringConvertible {
    public var description: String { hex }
}

extension Checksum: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Checksum(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a 40-digit SHA1: \(text)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

extension Array where Element == UInt8 {
    /// Lower-case hexadecimal, as `sha1sum` prints a digest and SigV4 writes digests and signatures.
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
