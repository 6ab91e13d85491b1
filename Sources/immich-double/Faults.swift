import CairnCore
import Foundation
import Hummingbird
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The faults the double injects on Immich routes (not /_double, not ping or version), drawn from one seeded
/// generator per request in arrival order, so a seed replays the same run. Rates are probabilities in 0...1.
struct FaultProfile: Codable, Sendable, Equatable {
    var seed: UInt64 = 1
    var status500: Double = 0
    var status429: Double = 0
    /// A reverse proxy's answer when Immich behind it is down (nginx's HTML page).
    var status502: Double = 0
    var retryAfterSeconds: Int = 1
    /// Performs the operation (an upload creates its asset), then drops the connection without a response.
    var resetBeforeResponse: Double = 0
    /// Reads part of the request body, then drops the connection; nothing happens.
    var resetMidBody: Double = 0
    var stallSeconds: Double = 0
    var stallRate: Double = 0
    /// A proxy's limit: a larger Content-Length gets 413 before the double reads anything.
    var maxBodyBytes: Int?
    /// The paths faults are drawn for (`/api/assets`, or `/api/assets/*` for every path below it); nil: every
    /// Immich route but ping and version.
    var paths: [String]?
    /// The methods faults are drawn for (`PUT`); nil: every method.
    var methods: [String]?

    init() {}

    // Every field optional in the JSON: a profile names only what it changes.
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? 1
        status500 = try c.decodeIfPresent(Double.self, forKey: .status500) ?? 0
        status429 = try c.decodeIfPresent(Double.self, forKey: .status429) ?? 0
        status502 = try c.decodeIfPresent(Double.self, forKey: .status502) ?? 0
        retryAfterSeconds = try c.decodeIfPresent(Int.self, forKey: .retryAfterSeconds) ?? 1
        resetBeforeResponse = try c.decodeIfPresent(Double.self, forKey: .resetBeforeResponse) ?? 0
        resetMidBody = try c.decodeIfPresent(Double.self, forKey: .resetMidBody) ?? 0
        stallSeconds = try c.decodeIfPresent(Double.self, forKey: .stallSeconds) ?? 0
        stallRate = try c.decodeIfPresent(Double.self, forKey: .stallRate) ?? 0
        maxBodyBytes = try c.decodeIfPresent(Int.self, forKey: .maxBodyBytes)
        paths = try c.decodeIfPresent([String].self, forKey: .paths)
        methods = try c.decodeIfPresent([String].self, forKey: .methods)
    }

    /// Whether a request to `path` with `method` may be faulted.
    func covers(path: String, method: String) -> Bool {
        let pathCovered = paths.map { $0.contains { $0 == path || ($0.hasSuffix("/*") && path.hasPrefix($0.dropLast())) } }
        return (pathCovered ?? true) && (methods.map { $0.contains(method) } ?? true)
    }
}

/// SplitMix64: tiny, seedable, and the same generator the test support uses.
struct SplitMix64: Sendable {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }
}

final class FaultInjector: Sendable {
    enum Fault: String, Sendable {
        case tooLarge = "maxBodyBytes", status500, status429, status502, resetBeforeResponse, resetMidBody
    }

    struct Decision: Sendable {
        var fault: Fault?
        var stallSeconds: Double
        var retryAfterSeconds: Int
    }

    private let state: Locked<(profile: FaultProfile, random: SplitMix64)>

    init(_ profile: FaultProfile) { state = Locked((profile, SplitMix64(state: profile.seed))) }

    var profile: FaultProfile { state.withLock { $0.profile } }

    /// A new profile restarts the generator from its seed.
    func set(_ profile: FaultProfile) { state.withLock { $0 = (profile, SplitMix64(state: profile.seed)) } }

    /// Two draws per request whatever happens, so one request's fault never shifts the next one's.
    func decide(contentLength: Int?) -> Decision {
        state.withLock { state in
            let p = state.profile
            let pick = state.random.nextUnit(), stall = state.random.nextUnit()
            var decision = Decision(stallSeconds: stall < p.stallRate ? p.stallSeconds : 0,
                                    retryAfterSeconds: p.retryAfterSeconds)
            if let limit = p.maxBodyBytes, let length = contentLength, length > limit {
                decision.fault = .tooLarge
                return decision
            }
            var edge = p.status500
            if pick < edge { decision.fault = .status500; return decision }
            edge += p.status429
            if pick < edge { decision.fault = .status429; return decision }
            edge += p.status502
            if pick < edge { decision.fault = .status502; return decision }
            edge += p.resetBeforeResponse
            if pick < edge { decision.fault = .resetBeforeResponse; return decision }
            edge += p.resetMidBody
            if pick < edge { decision.fault = .resetMidBody }
            return decision
        }
    }
}

/// The request context: Hummingbird's basic one plus the connection, which the resets close.
struct DoubleContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// Thrown after a reset: Hummingbird's 500 for it goes to a closed socket, so the client sees only the reset.
struct DroppedConnection: Error {}

enum Connection {
    /// Closes with SO_LINGER 0, so the kernel sends RST: the client reads "connection reset", not a clean EOF.
    static func reset(_ channel: any Channel) async {
        if let sockets = channel as? any SocketOptionProvider {
            try? await sockets.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        }
        try? await channel.close().get()
    }
}

struct FaultMiddleware: RouterMiddleware {
    typealias Context = DoubleContext
    let injector: FaultInjector
    /// Ping and version stay honest: a client's first contact should tell it the server is there.
    static let exempt: Set<String> = ["/api/server/ping", "/api/server/version"]

    func handle(_ request: Request, context: DoubleContext,
                next: (Request, DoubleContext) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path.hasPrefix("/api/"), !Self.exempt.contains(path),
              injector.profile.covers(path: path, method: request.method.rawValue) else { return try await next(request, context) }
        let length = request.headers[.contentLength].flatMap { Int($0) }
        let decision = injector.decide(contentLength: length)
        if decision.stallSeconds > 0 { try await Task.sleep(for: .seconds(decision.stallSeconds)) }
        guard let fault = decision.fault else {
            guard let limit = injector.profile.maxBodyBytes, length == nil else { return try await next(request, context) }
            // A body sent without a length (chunked, as a streamed multipart upload is) is counted as it arrives,
            // and refused once past the limit, as nginx does.
            let exceeded = LimitFlag()
            var limited = request
            limited.body = RequestBody(asyncSequence: LimitedBody(base: request.body, limit: limit, exceeded: exceeded))
            do {
                let response = try await next(limited, context)
                if !exceeded.isSet { return response }
            } catch where exceeded.isSet {}
            RequestScope.traffic?.setFault(FaultInjector.Fault.tooLarge.rawValue)
            return Self.tooLarge()
        }
        RequestScope.traffic?.setFault(fault.rawValue)
        switch fault {
        case .tooLarge:
            return Self.tooLarge()
        case .status500:
            return DoubleRoutes.json(Data(#"{"message":"Internal server error","statusCode":500}"#.utf8), status: .internalServerError)
        case .status502:
            let html = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
                + "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
            return Response(status: .badGateway, headers: [.contentType: "text/html"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        case .status429:
            var response = DoubleRoutes.json(Data(#"{"message":"Too Many Requests","error":"Too Many Requests","statusCode":429}"#.utf8),
                                             status: .tooManyRequests)
            response.headers[.retryAfter] = String(decision.retryAfterSeconds)
            return response
        case .resetMidBody:
            // Read about half of what the client sends, so the drop lands mid-upload.
            let target = max(1, (length ?? 2) / 2)
            var read = 0
            var iterator = request.body.makeAsyncIterator()
            while read < target, let chunk = try await iterator.next() { read += chunk.readableBytes }
            await Connection.reset(context.channel)
            throw DroppedConnection()
        case .resetBeforeResponse:
            let response = try await next(request, context)
            _ = try await TrafficMiddleware.collect(response.body)
            RequestScope.traffic?.setResponse(status: response.status.code, contentType: nil, body: nil)
            await Connection.reset(context.channel)
            throw DroppedConnection()
        }
    }

    /// What nginx says; `Connection: close` makes the client hang up instead of sending the rest.
    static func tooLarge() -> Response {
        let html = "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
            + "<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
        return Response(status: .contentTooLarge, headers: [.contentType: "text/html", .connection: "close"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}

/// Set once a limited body went past its limit.
final class LimitFlag: Sendable {
    private let state = Locked(false)
    var isSet: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}

/// A request body that fails once more than `limit` bytes arrived.
struct LimitedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: RequestBody
    let limit: Int
    let exceeded: LimitFlag

    struct TooLarge: Error {}

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        let limit: Int
        let exceeded: LimitFlag
        var count = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            count += chunk.readableBytes
            if count > limit {
                exceeded.set()
                throw TooLarge()
            }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), limit: limit, exceeded: exceeded)
    }
}
