import CairnCore
import Foundation
import HTTPTypes
import Hummingbird
#if canImport(Glibc)
import Glibc
#endif

/// What one request on an Immich route did, written as one NDJSON line for scripts/validate-immich-traffic, which
/// rebuilds the request and response from it and checks both against Immich's unfiltered spec.
final class TrafficRecord: Sendable {
    struct Line: Encodable {
        var method: String
        var path: String
        var query: String?
        var requestHeaders: [String: String]
        var requestContentType: String?
        /// JSON text, or a multipart body re-encoded with each file's bytes replaced by "[N bytes]".
        var requestBody: String?
        /// The handler answered without reading the body (a known checksum header), so it was never seen.
        var requestBodyUnread: Bool?
        var status: Int?
        var responseHeaders: [String: String]?
        var responseBody: String?
        /// Set when the fault injector answered or dropped the connection: not Immich's contract, not validated.
        var fault: String?
    }

    private struct Part {
        var name: String
        var filename: String?
        var contentType: String?
        var content: String
    }

    private struct State {
        var line: Line
        var parts: [Part] = []
        var multipart = false
    }

    private let state: Locked<State>
    static let boundary = "immich-double-traffic-boundary"
    /// Only these request headers matter to the spec; the API key's value never reaches the log.
    static let loggedHeaders = ["content-type", "x-immich-checksum", "accept", "content-length"]

    init(_ request: Request) {
        var headers: [String: String] = [:]
        for name in Self.loggedHeaders {
            if let field = HTTPField.Name(name), let value = request.headers[field] { headers[name] = value }
        }
        if request.headers[HTTPField.Name("x-api-key")!] != nil { headers["x-api-key"] = "***" }
        let contentType = request.headers[.contentType]
        var line = Line(method: request.method.rawValue, path: request.uri.path, query: request.uri.query,
                        requestHeaders: headers)
        line.requestContentType = contentType
        var state = State(line: line)
        if contentType?.lowercased().hasPrefix("multipart/") == true {
            state.multipart = true
            state.line.requestContentType = "multipart/form-data; boundary=\(Self.boundary)"
        }
        self.state = Locked(state)
    }

    func setBody(_ text: String) { state.withLock { $0.line.requestBody = text } }
    func markBodyUnread() { state.withLock { $0.line.requestBodyUnread = true } }
    func setFault(_ fault: String) { state.withLock { $0.line.fault = $0.line.fault ?? fault } }

    func addFilePart(name: String, filename: String?, bytes: Int) {
        state.withLock {
            $0.parts.append(Part(name: name, filename: filename ?? "blob", contentType: "application/octet-stream",
                                 content: "[\(bytes) bytes]"))
        }
    }

    func addTextPart(name: String, value: String, contentType: String?) {
        state.withLock { $0.parts.append(Part(name: name, contentType: contentType, content: value)) }
    }

    func setResponse(status: Int, contentType: String?, body: String?) {
        state.withLock {
            $0.line.status = status
            $0.line.responseHeaders = contentType.map { ["content-type": $0] } ?? [:]
            $0.line.responseBody = body
        }
    }

    func encodedLine() -> Data {
        let line = state.withLock { state -> Line in
            var line = state.line
            if state.multipart, line.requestBodyUnread != true { line.requestBody = Self.multipart(state.parts) }
            return line
        }
        var data = (try? Timestamp.jsonEncoder().encode(line)) ?? Data("{}".utf8)
        data.append(0x0A)
        return data
    }

    private static func multipart(_ parts: [Part]) -> String {
        var out = ""
        for part in parts {
            var disposition = "form-data; name=\"\(part.name)\""
            if let filename = part.filename {
                disposition += "; filename=\"\(filename.replacingOccurrences(of: "\"", with: "%22"))\""
            }
            out += "--\(boundary)\r\nContent-Disposition: \(disposition)\r\n"
            if let type = part.contentType { out += "Content-Type: \(type)\r\n" }
            out += "\r\n\(part.content)\r\n"
        }
        return out + "--\(boundary)--\r\n"
    }
}

/// The NDJSON file: one write(2) per line, so a killed double leaves only whole lines behind.
final class TrafficLog: Sendable {
    private let fd: Locked<Int32>

    init(path: String) throws {
        let opened = SystemCall.result { open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644) }
        guard case .success(let fd) = opened else {
            throw DoubleFailure("cannot open traffic log \(path): \(opened.failureReason)")
        }
        self.fd = Locked(fd)
    }

    func append(_ record: TrafficRecord) {
        let data = record.encodedLine()
        fd.withLock { fd in
            // A line the log cannot take is dropped: the checker then finds the traffic short and says so.
            data.withUnsafeBytes { raw in _ = try? writeFully(fd, raw, path: "traffic log") }
        }
    }

    func close() { fd.withLock { fd in _ = Glibc.close(fd); fd = -1 } }
}

struct DoubleFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Counts the Immich requests and, with a traffic log, records each one: JSON bodies are read here (they are small),
/// multipart parts are noted by the upload handler as it streams them, responses are collected (all small JSON).
struct TrafficMiddleware: RouterMiddleware {
    typealias Context = DoubleContext
    let store: Store
    let log: TrafficLog?

    func handle(_ request: Request, context: DoubleContext,
                next: (Request, DoubleContext) async throws -> Response) async throws -> Response {
        // Hummingbird runs router middlewares for unmatched paths too; only Immich's /api counts.
        guard request.uri.path.hasPrefix("/api/") else { return try await next(request, context) }
        await store.countRequest()
        guard let log else { return try await Self.nestNotFound(request) { try await next(request, context) } }
        let record = TrafficRecord(request)
        var request = request
        if request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true {
            let buffer = try await request.collectBody(upTo: 16 << 20)
            record.setBody(String(buffer: buffer))
        }
        do {
            var response = try await RequestScope.$traffic.withValue(record) {
                try await Self.nestNotFound(request) { try await next(request, context) }
            }
            let body = try await Self.collect(response.body)
            response.body = ResponseBody(byteBuffer: body)
            record.setResponse(status: response.status.code, contentType: response.headers[.contentType],
                               body: body.readableBytes > 0 ? String(buffer: body) : nil)
            log.append(record)
            return response
        } catch {
            record.setFault(error is DroppedConnection ? "reset" : "error: \(error)")
            log.append(record)
            throw error
        }
    }

    /// An unknown /api route answered as Nest does (and logged as such, so the validator names the stray call).
    static func nestNotFound(_ request: Request, _ next: () async throws -> Response) async throws -> Response {
        do { return try await next() } catch let error as HTTPError where error.status == .notFound {
            let body = ImmichError.body(status: .notFound,
                                        message: .text("Cannot \(request.method.rawValue) \(request.uri.path)"))
            return DoubleRoutes.json(body, status: .notFound)
        }
    }

    /// A response body as one buffer: the double's responses are small JSON (or a fault's short text).
    static func collect(_ body: ResponseBody) async throws -> ByteBuffer {
        let sink = Sink()
        try await body.write(CollectingWriter(sink: sink))
        return sink.buffer.withLock { $0 }
    }

    final class Sink: Sendable {
        let buffer = Locked(ByteBuffer())
    }

    struct CollectingWriter: ResponseBodyWriter {
        let sink: Sink
        mutating func write(_ buffer: ByteBuffer) async throws {
            sink.buffer.withLock { stored in
                var copy = buffer
                stored.writeBuffer(&copy)
            }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
