import CairnCore
import Foundation

/// One upload's `multipart/form-data` body, framed by hand around the file's bytes so that its length is known
/// before the first byte goes out: the request carries a `Content-Length` (some proxies refuse a chunked body),
/// and a proxy's size limit answers before the file is sent. The generated types stream a multipart body of unknown
/// length, which is why the upload alone is framed here.
///
/// The parts go in the order Immich's upload filter needs (`canUploadFile` judges each file part as it arrives by
/// the `filename` field when one came before it, else by the part's own name): the sidecar first, judged as the
/// `.xmp` it is, then the fields, then the file.
struct UploadFraming: Sendable {
    let boundary: String
    /// Every part before the file's bytes, the file part's own header included.
    let head: [UInt8]
    /// The end of the file part and of the form.
    let tail: [UInt8]

    init(file: ImmichUploadFile, sidecar: Data?, boundary: String = "cairn-" + UUID().uuidString) {
        self.boundary = boundary
        var head: [UInt8] = []
        func header(_ name: String, filename: String? = nil) {
            var line = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\""
            if let filename { line += "; filename=\"\(Self.quoted(filename))\"\r\nContent-Type: application/octet-stream" }
            head += Array((line + "\r\n\r\n").utf8)
        }
        func field(_ name: String, _ value: String) {
            header(name)
            head += Array((value + "\r\n").utf8)
        }
        if let sidecar {
            header("sidecarData", filename: file.filename + ".xmp")
            head += Array(sidecar) + Array("\r\n".utf8)
        }
        field("fileCreatedAt", file.createdAt)
        field("fileModifiedAt", file.modifiedAt)
        field("filename", file.filename)
        if let milliseconds = file.durationMilliseconds { field("duration", String(milliseconds)) }
        if file.hidden { field("visibility", "hidden") }
        if let video = file.livePhotoVideoID { field("livePhotoVideoId", video) }
        header("assetData", filename: file.filename)
        self.head = head
        tail = Array("\r\n--\(boundary)--\r\n".utf8)
    }

    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The whole body's length for a file of `fileBytes` bytes.
    func length(fileBytes: Int64) -> Int64 { Int64(head.count + tail.count) + fileBytes }

    /// A file name inside a quoted header parameter: its quote and line breaks cannot end the parameter early. The
    /// rest goes as UTF-8, which Immich reads back (`mapToUploadFile` decodes the name from latin1 bytes as UTF-8).
    static func quoted(_ name: String) -> String {
        name.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "")
            .replacingOccurrences(of: "\n", with: "")
    }
}

/// The framing's head, the file's chunks and its tail, as one body.
struct FramedBody<File: AsyncSequence & Sendable>: AsyncSequence, Sendable where File.Element == ArraySlice<UInt8> {
    typealias Element = ArraySlice<UInt8>
    let framing: UploadFraming
    let file: File
    /// Told of every chunk the transport takes, and of the end.
    var progress: BodyProgress?

    struct AsyncIterator: AsyncIteratorProtocol {
        var head: [UInt8]?
        var file: File.AsyncIterator
        var tail: [UInt8]?
        let progress: BodyProgress?

        mutating func next() async throws -> ArraySlice<UInt8>? {
            progress?.pulled()
            if let head {
                self.head = nil
                return ArraySlice(head)
            }
            if tail != nil, let chunk = try await file.next() { return chunk }
            defer { tail = nil }
            if tail == nil { progress?.finished() }
            return tail.map { ArraySlice($0) }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(head: framing.head, file: file.makeAsyncIterator(), tail: framing.tail, progress: progress)
    }
}

/// Bytes held in memory as the chunks of an upload's file part.
struct MemoryChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let bytes: [UInt8]
    /// The most a chunk holds.
    let length: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let bytes: [UInt8]
        let length: Int
        var at = 0

        mutating func next() async -> ArraySlice<UInt8>? {
            guard at < bytes.count else { return nil }
            let end = Swift.min(bytes.count, at + length)
            defer { at = end }
            return bytes[at..<end]
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes, length: Swift.max(1, length)) }
}

/// When the transport last took a chunk of a request body, and whether it took the last one. AsyncHTTPClient's
/// write timeout only counts time the connection could take data and the body gave none; a server that stops
/// reading makes the connection unwritable, which that timeout never counts: `stalled(after:)` does.
final class BodyProgress: Sendable {
    private let state: Locked<(last: ContinuousClock.Instant, done: Bool)>

    init() { state = Locked((ContinuousClock.now, false)) }

    func pulled() { state.withLock { $0.last = ContinuousClock.now } }

    func finished() { state.withLock { $0.done = true } }

    /// Waits until the body has not moved for `idle` (returns) or is all sent (waits until cancelled).
    func stalled(after idle: Duration) async throws {
        while true {
            let (last, done) = state.withLock { ($0.last, $0.done) }
            if !done, ContinuousClock.now - last >= idle { return }
            try await Task.sleep(for: min(idle / 4, .seconds(1)))
        }
    }
}
