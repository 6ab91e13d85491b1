import AsyncHTTPClient
import CairnCore
import Foundation
import HTTPTypes
import ImmichAPI
import NIOCore
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

/// One Immich server and account, as cairn uses it: every call goes through the generated client, is retried by
/// `RetryPolicy` when its failure is retryable, and fails with an `ImmichFailure` otherwise. The calls a run makes
/// in bulk (checking checksums, trashing, restoring, tagging, filling albums) take whole lists.
///
/// Owns its HTTP client: call `close()` when done (AsyncHTTPClient refuses to be dropped while open).
public final class ImmichClient: Sendable {
    public let endpoint: ImmichEndpoint
    let api: Client
    /// Uploads ride a transport of their own whose request deadline is long: a 2 GB video on a slow uplink takes
    /// hours. A stalled upload is still caught: by the HTTP client's write timeout while the body will not go out,
    /// by its read timeout while the answer does not come. Their bodies are framed by hand (`UploadFraming`).
    let uploads: AsyncHTTPClientTransport
    let key: ImmichAPIKey
    let http: HTTPClient
    let retry: RetryPolicy
    let clock: any Clock<Duration>
    let timeouts: Timeouts
    /// The server's refusal of the key, once it refused it mid-run: what stops the run, and its exit code says so.
    public let keyRefused = Locked<ImmichFailure?>(nil)

    /// How long a connection may take to open, and how long a request may wait for the server to read or to answer
    /// before it fails (each an idle time, not a deadline: a long upload that keeps moving never times out).
    public struct Timeouts: Sendable {
        public var connect: Duration
        public var idleRead: Duration
        public var idleWrite: Duration

        public init(connect: Duration = .seconds(10), idleRead: Duration = .seconds(120), idleWrite: Duration = .seconds(120)) {
            self.connect = connect
            self.idleRead = idleRead
            self.idleWrite = idleWrite
        }
    }

    public init(endpoint: ImmichEndpoint, key: ImmichAPIKey, retry: RetryPolicy = RetryPolicy(),
                clock: any Clock<Duration> = ContinuousClock(), connections: Int = 8, timeouts: Timeouts = Timeouts()) {
        func amount(_ duration: Duration) -> TimeAmount {
            .nanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
        }
        var configuration = HTTPClient.Configuration(
            timeout: .init(connect: amount(timeouts.connect), read: amount(timeouts.idleRead), write: amount(timeouts.idleWrite)))
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(connections + 2, 8)
        configuration.decompression = .disabled
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let middlewares: [any ClientMiddleware] = [APIKeyMiddleware(key: key)]
        let codec = Configuration(dateTranscoder: TimestampTranscoder())
        api = Client(serverURL: endpoint.apiURL, configuration: codec,
                     transport: AsyncHTTPClientTransport(configuration: .init(client: http, timeout: .seconds(90))),
                     middlewares: middlewares)
        uploads = AsyncHTTPClientTransport(configuration: .init(client: http, timeout: .hours(48)))
        self.key = key
        self.endpoint = endpoint
        self.http = http
        self.retry = retry
        self.clock = clock
        self.timeouts = timeouts
    }

    public func close() async {
        try? await http.shutdown()
    }

    // MARK: Retries

    /// Runs `body` until it succeeds, fails for good, or the policy's tries are used up. `settle` is asked, after a
    /// try whose outcome is unknown, whether the work was done anyway; its answer ends the loop.
    func withRetries<Value: Sendable>(
        _ operation: String, settle: (@Sendable () async throws(ImmichFailure) -> Value?)? = nil,
        _ body: @Sendable () async throws(ImmichFailure) -> Value
    ) async throws(ImmichFailure) -> Value {
        var attempt = 0
        while true {
            attempt += 1
            let failure: ImmichFailure
            do { return try await body() } catch { failure = error }
            guard failure.kind == .retryable else { throw failure }
            if failure.outcomeUnknown, let settle, let settled = try await settle() { return settled }
            guard attempt < retry.attempts else {
                var last = failure
                last.message += " (after \(attempt) tries)"
                throw last
            }
            let pause = retry.delay(after: attempt, retryAfter: failure.retryAfter, draw: Double.random(in: 0...1))
            do { try await clock.sleep(for: pause) } catch {
                throw ImmichFailure(kind: .permanent, operation: operation, message: "cancelled")
            }
        }
    }

    /// A call of the generated client, its thrown errors (the transport's) turned into failures.
    func call<Output>(_ operation: String, _ body: () async throws -> Output) async throws(ImmichFailure) -> Output {
        do { return try await body() } catch {
            throw Self.transportFailure(error, operation: operation)
        }
    }

    /// One request with its retries (`withRetries`): `send` calls the generated client and `read` takes the value
    /// out of the documented answer (`try $0.ok.body.json`). An answer the spec does not document is classified with
    /// the server's message and thrown; one that does not read as the spec says is a permanent failure.
    func perform<Output: Sendable, Value: Sendable>(
        _ operation: String, _ send: @Sendable () async throws -> Output, read: @Sendable (Output) throws -> Value
    ) async throws(ImmichFailure) -> Value {
        try await withRetries(operation) { () throws(ImmichFailure) in try await once(operation, send, read: read) }
    }

    /// As `perform`, one try.
    func once<Output: Sendable, Value>(_ operation: String, _ send: () async throws -> Output,
                                       read: (Output) throws -> Value) async throws(ImmichFailure) -> Value {
        let output = try await call(operation, send)
        // Every generated `Output` has the case `undocumented(statusCode:_:)`, and no protocol to read it by.
        if let answer = Mirror(reflecting: output).children.first, answer.label == "undocumented",
           let (status, payload) = answer.value as? (statusCode: Int, UndocumentedPayload) {
            throw await undocumented(status, payload, operation: operation)
        }
        return try Self.json(operation) { try read(output) }
    }

    /// A transport error in words that cannot carry the request: the runtime's `ClientError` holds the request
    /// and its headers (the key among them), so only the underlying HTTP client error is described.
    static func transportFailure(_ error: any Error, operation: String) -> ImmichFailure {
        if error is CancellationError {
            return ImmichFailure(kind: .permanent, operation: operation, message: "cancelled")
        }
        let underlying = (error as? ClientError)?.underlyingError ?? error
        let message: String
        if let http = underlying as? HTTPClientError {
            // A server that stopped reading or answering: counted as a timeout, retried as any connection problem.
            if [.readTimeout, .writeTimeout, .connectTimeout].contains(http) {
                return ImmichFailure(kind: .retryable, operation: operation,
                                     message: "the server stopped \(http == .writeTimeout ? "reading" : "answering") "
                                        + "(\(http.shortDescription))",
                                     outcomeUnknown: http != .connectTimeout, category: .timeout)
            }
            message = "connection problem (\(http.shortDescription))"
        } else if underlying is DecodingError {
            return ImmichFailure(kind: .permanent, operation: operation,
                                 message: "the server's answer does not match Immich's API (is this an Immich server?)",
                                 category: .server)
        } else {
            message = "connection problem (\(type(of: underlying)))"
        }
        return ImmichFailure(kind: .retryable, operation: operation, message: message, outcomeUnknown: true)
    }

    /// An undocumented answer, classified with the server's message; a refused key is kept (`keyRefused`).
    func undocumented(_ status: Int, _ payload: UndocumentedPayload, operation: String) async -> ImmichFailure {
        var text = ""
        if let body = payload.body { text = (try? await String(collecting: body, upTo: 64 * 1024)) ?? "" }
        let retryAfter = payload.headerFields[HTTPField.Name("Retry-After")!]
        let failure = ImmichFailure.classify(status: status, body: text, retryAfter: retryAfter, operation: operation)
        if failure.kind == .needsAuth { keyRefused.withLock { $0 = failure } }
        return failure
    }
}

/// Adds the API key to every request. The only reader of the key's value.
struct APIKeyMiddleware: ClientMiddleware {
    let key: ImmichAPIKey
    static let header = HTTPField.Name("x-api-key")!

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?))
        async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[Self.header] = key.value
        return try await next(request, body, baseURL)
    }
}

extension HTTPClientError {
    /// The error's name alone ("remoteConnectionClosed", "readTimeout").
    var shortDescription: String {
        let text = String(describing: self)
        return text.hasPrefix("HTTPClientError.") ? String(text.dropFirst("HTTPClientError.".count)) : text
    }
}

/// Immich's dates (fractional seconds, which the runtime's default transcoder refuses) read and written by
/// `Timestamp`, not by the runtime's ICU-backed formatter behind a lock.
struct TimestampTranscoder: DateTranscoder {
    func encode(_ date: Date) throws -> String { Timestamp.withMilliseconds(date) }

    func decode(_ text: String) throws -> Date {
        guard let date = Timestamp.parse(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not an ISO 8601 time: \(text)"))
        }
        return date
    }
}
