import Testing
import CairnCore

@Suite struct ChecksumTests {
    @Test func hexRoundTripKeepsEveryByte() throws {
        let bytes: [UInt8] = (0..<20).map { UInt8($0 * 13 &+ 7) }
        let checksum = try #require(Checksum(bytes: bytes))
        #expect(checksum.bytes == bytes)
        #expect(Checksum(hex: checksum.hex) == checksum)
        #expect(checksum.hex.count == 40)
    }

    @Test func knownDigestOfEmptyInput() throws {
        let empty = try #require(Checksum(hex: "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709"))
        #expect(empty.hex == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    @Test func rejectsMalformedText() {
        #expect(Checksum(hex: "zz39a3ee5e6b4b0d3255bfef95601890afd80709") == nil)
        #expect(Checksum(hex: "da39") == nil)
        #expect(Checksum(bytes: [UInt8](repeating: 0, count: 19)) == nil)
    }

    @Test func ordersByBytes() throws {
        let a = try #require(Checksum(hex: String(repeating: "0", count: 39) + "1"))
        let b = try #require(Checksum(hex: "1" + String(repeating: "0", count: 39)))
        #expect(a < b)
    }
}
