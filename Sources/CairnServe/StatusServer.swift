import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMetrics
import CairnNarration
import CairnStatus
import CairnStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The read-only web face of a library (`cairn serve`, `cairn watch --listen`): `/` the status page (live through
/// `/live.js`), `/events` the runs as they happen (Server-Sent Events, from the run logs), `/status.json` what
/// `cairn status --json` says, `/metrics` for Prometheus, `/healthz`, and `/thumbnails/<sha1>`.
/// Every request opens the catalog (`StatusCatalogSource`: the SQLite file, or the PostgreSQL database) read-only
/// and without the run lock, so it answers while a sync runs, and writes nothing.
public struct StatusServer: Sendable {
    public var catalog: any StatusCatalogSource
    public var listen: ListenAddress
    /// When set, every request but `/healthz` needs `Authorization: Bearer <token>`.
    public var token: String?
    public var quarantineDays: Int?
    /// Called with the port once the server listens (the port chosen when `listen` asked for 0).
    public var onListening: @Sendable (Int) -> Void = { _ in }
    /// How long a connection may leave what was written to it untaken before it is closed (`SlowReaderGuard`).
    public var slowClientLimit: Duration = .seconds(30)
    /// The shared queue's status, on a server given one (`--queue`): the page's queue section and `/queue.json`.
    public var queueStatus: (@Sendable () async throws -> QueueStatus)?
    /// Where the library's files are when not in its folder (`cairn import --store`): thumbnails are read there.
    public var store: (any ObjectStore)?
    /// Called when a connection is closed for reading too slowly.
    public var onClientDropped: @Sendable () -> Void = {}

    public init(catalog: any StatusCatalogSource, listen: ListenAddress, token: String?, quarantineDays: Int?) {
        self.catalog = catalog
        self.listen = listen
        self.token = token
        self.quarantineDays = quarantineDays
    }

    /// Serves until the task is cancelled or, when `stopsOnSignals`, the process gets SIGINT or SIGTERM.
    public func run(stopsOnSignals: Bool = true) async throws {
        var logger = Logger(label: "cairn.serve")
        logger.logLevel = .warning
        let limit = TimeAmount(slowClientLimit), onDrop = onClientDropped
        let app = Application(
            router: makeRouter(),
            server: .http1(configuration: .init(additionalChannelHandlers: [SlowReaderGuard(limit: limit, onDrop: onDrop)])),
            configuration: .init(address: .hostname(listen.host, port: listen.port), serverName: nil),
            onServerRunning: { [onListening, listen] channel in onListening(channel.localAddress?.port ?? listen.port) },
            logger: logger)
        try await app.runService(gracefulShutdownSignals: stopsOnSignals ? [.sigterm, .sigint] : [])
    }

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("healthz") { _, _ in "ok\n" }
        router.add(middleware: AccessGuard(token: token, listen: listen))
        let source = catalog, quarantineDays = quarantineDays, store = store
        let root = source.layout.root
        if token != nil {
            router.get("signin") { _, _ in AccessGuard<BasicRequestContext>.signInPage(status: .ok, failed: false) }
            router.post("signin") { request, _ -> Response in
                try await AccessGuard<BasicRequestContext>(token: token, listen: listen).signIn(request)
            }
        }
        // A tape's playlist, segments and tape.mp4 (ranges too, for seeking), for the page's player: only what is
        // under tapes/ (the playlist reaches its clips as ../.clips/…, which a browser resolves within it), and in a
        // group of its own, so no request outside /tapes reaches the file middleware.
        router.group("tapes").add(middleware: FileMiddleware(source.layout.tapesDirectory, urlBasePath: "/tapes"))
            .get("**") { _, _ -> Response in throw HTTPError(.notFound) }
        let runLogs = RunLogStore(directory: source.layout.runLogDirectory)
        router.get("events") { request, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream; charset=utf-8"
            headers[.cacheControl] = "no-store"
            // Proxies that buffer (nginx) would hold the stream back.
            headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
            let resuming = request.headers[HTTPField.Name("Last-Event-ID")!].flatMap(RunEventID.init)
            return Response(status: .ok, headers: headers,
                            body: .init(asyncSequence: RunEventFrames(store: runLogs, resumingAfter: resuming)
                                .cancelOnGracefulShutdown()))
        }
        router.get("live.js") { _, _ -> Response in
            Response.whole("text/javascript; charset=utf-8", cache: "no-cache", ByteBuffer(string: LiveScript.source))
        }
        router.get("metrics") { _, _ -> Response in
            let text = try await Self.reading(source) { catalog in
                let metrics = try await LibraryMetricsReader.read(layout: source.layout, catalog: catalog, labelRoot: root,
                                                                  sourceRoot: nil, quarantineDays: quarantineDays)
                return MetricsExposition.render([metrics], version: CairnVersion.current)
            }
            return Self.response(text, type: "text/plain; version=0.0.4; charset=utf-8")
        }
        let queueStatus = queueStatus
        router.get("queue.json") { _, _ -> Response in
            guard let queueStatus else { throw HTTPError(.notFound, message: "no queue: `cairn serve --queue URL` shows one\n") }
            do {
                return Self.response(try await queueStatus().json, type: "application/json")
            } catch {
                throw HTTPError(.serviceUnavailable, message: "the queue cannot be read: \(error)\n")
            }
        }
        router.get("status.json") { _, _ -> Response in
            let text = try await Self.reading(source) {
                try await LibraryStatus.report(layout: source.layout, catalog: $0).json(now: Date())
            }
            return Self.response(text, type: "application/json")
        }
        router.get("/") { _, _ -> Response in
            var queue: Result<QueueStatus, any Error>?
            if let queueStatus {
                do { queue = .success(try await queueStatus()) } catch { queue = .failure(error) }
            }
            let html = try await Self.reading(source) { [queue] catalog in
                StatusPage.render(try await StatusPageFacts.read(layout: source.layout, catalog: catalog),
                                  libraryName: URL(fileURLWithPath: root).lastPathComponent,
                                  libraryRoot: root, now: Date(), queue: queue)
            }
            var response = Self.response(html, type: "text/html; charset=utf-8")
            response.headers[.contentSecurityPolicy] = StatusPage.contentSecurityPolicy
            return response
        }
        router.get("thumbnails/:sha1") { _, context -> Response in
            let sha1 = try context.parameters.require("sha1")
            // The path comes from the catalog's row for a checksum, never from the request.
            let found = try await Self.reading(source) { try await StatusPageFacts.thumbnail(catalog: $0, sha1: sha1) }
            guard let found, let data = try await Self.contents(of: found.path, in: source.layout, store: store) else {
                throw HTTPError(.notFound, message: "no thumbnail for \(sha1)\n")
            }
            // Content-addressed: the bytes for a checksum never change.
            return Response.whole(found.format == "webp" ? "image/webp" : "image/jpeg",
                                  cache: "public, max-age=31536000, immutable", ByteBuffer(bytes: data))
        }
        return router
    }

    /// A library file's bytes: from the store the library's files are in, else from its folder; nil when absent.
    private static func contents(of relative: String, in layout: LibraryLayout, store: (any ObjectStore)?) async throws
        -> [UInt8]? {
        guard let store else { return FileManager.default.contents(atPath: layout.absolute(relative)).map(Array.init) }
        do {
            let key = try ObjectKey(relative)
            let bytes = try await store.read(key, range: nil)
            if bytes.isEmpty, try await store.size(of: key) == nil { return nil }
            return bytes
        } catch {
            throw HTTPError(.serviceUnavailable, message: "\(store.description) cannot be read: \(error)\n")
        }
    }

    /// `body` over the catalog, read for this request; a folder with no library yet, or a catalog that cannot be
    /// read (its database down), answers 503 with the reason in one line.
    private static func reading<T: Sendable>(_ source: any StatusCatalogSource,
                                             _ body: (any StatusCatalog) async throws -> T) async throws -> T {
        let root = source.layout.root
        guard LibraryLayout.holdsLibrary(root) else {
            throw HTTPError(.serviceUnavailable, message: "\(root): no cairn library here yet\n")
        }
        do {
            return try await source.reading(body)
        } catch {
            throw HTTPError(.serviceUnavailable, message: "\(root): the catalog cannot be read: \(error)\n")
        }
    }

    private static func response(_ text: String, type: String) -> Response { Response.whole(type, ByteBuffer(string: text)) }
}

/// `host:port`, `[v6]:port` or `:port` (loopback).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public static let `default` = ListenAddress(host: "127.0.0.1", port: 8080)

    public init(host: String, port: Int) { self.host = host; self.port = port }

    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host.isEmpty ? "127.0.0.1" : host
        self.port = port
    }

    /// Whether only this machine can connect.
    public var isLoopback: Bool { host == "localhost" || host == "::1" || host.hasPrefix("127.") }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
