import CairnCore
@testable import CairnImmich
import Foundation
import Testing

/// The upload's multipart body framed by hand: its length is known before it is sent, and its parts come in the
/// order Immich's upload filter needs.
@Suite struct UploadFramingTests {
    static func file(name: String = "IMG_1.jpg") -> ImmichUploadFile {
        ImmichUploadFile(content: .file("/src/\(name)"), byteCount: 5, checksum: Checksum(hex: String(repeating: "ab", count: 20))!,
                         filename: name, createdAt: "2024-05-06T07:08:09.000+02:00",
                         modifiedAt: "2024-05-06T07:08:09.000+02:00", durationMilliseconds: 1500)
    }

    /// The whole body, file bytes included, as the server reads it.
    static func body(_ framing: UploadFraming, file: [UInt8]) async throws -> [UInt8] {
        struct Chunks: AsyncSequence, Sendable {
            typealias Element = ArraySlice<UInt8>
            let chunks: [[UInt8]]
            struct AsyncIterator: AsyncIteratorProtocol {
                var rest: [[UInt8]]
                mutating func next() async throws -> ArraySlice<UInt8>? { rest.isEmpty ? nil : ArraySlice(rest.removeFirst()) }
            }
            func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rest: chunks) }
        }
        var out: [UInt8] = []
        for try await chunk in FramedBody(framing: framing, file: Chunks(chunks: [Array(file.prefix(2)), Array(file.dropFirst(2))])) {
            out += chunk
        }
        return out
    }

    @Test func theLengthIsKnownAndTheSidecarComesBeforeTheFilenameField() async throws {
        let sidecar = Data("<x:xmpmeta/>".utf8)
        let framing = UploadFraming(file: Self.file(), sidecar: sidecar, boundary: "B")
        let bytes = try await Self.body(framing, file: Array("hello".utf8))
        #expect(Int64(bytes.count) == framing.length(fileBytes: 5))
        let text = String(decoding: bytes, as: UTF8.self)
        let sidecarAt = try #require(text.range(of: "name=\"sidecarData\"; filename=\"IMG_1.jpg.xmp\""))
        let filenameAt = try #require(text.range(of: "name=\"filename\"\r\n\r\nIMG_1.jpg\r\n"))
        let fileAt = try #require(text.range(of: "name=\"assetData\"; filename=\"IMG_1.jpg\""))
        #expect(sidecarAt.lowerBound < filenameAt.lowerBound && filenameAt.lowerBound < fileAt.lowerBound)
        #expect(text.contains("name=\"duration\"\r\n\r\n1500\r\n"))
        #expect(text.hasSuffix("\r\n\r\nhello\r\n--B--\r\n"))
        #expect(framing.contentType == "multipart/form-data; boundary=B")
    }

    @Test func aQuoteOrLineBreakInAFileNameCannotEndItsParameter() {
        let framing = UploadFraming(file: Self.file(name: "a\"b\r\nc.jpg"), sidecar: nil, boundary: "B")
        let text = String(decoding: framing.head, as: UTF8.self)
        #expect(text.contains("filename=\"a%22bc.jpg\""))
        #expect(!text.contains("sidecarData"))
    }

    /// Bytes in memory go out whole, in chunks of at most the length asked.
    @Test func bytesInMemoryAreSentInBoundedChunks() async {
        let bytes = (0..<2_500).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var sent: [UInt8] = []
        var largest = 0
        for await chunk in MemoryChunks(bytes: bytes, length: 1_000) {
            largest = max(largest, chunk.count)
            sent += chunk
        }
        #expect(sent == bytes && largest == 1_000)
        var none = MemoryChunks(bytes: [], length: 1_000).makeAsyncIterator()
        #expect(await none.next() == nil)
    }
}
