import Foundation
import Hummingbird
import ImmichAPI
import Logging
import OpenAPIHummingbird
import OpenAPIRuntime

// immich-double: a stand-in Immich server for cairn's tests and benchmarks (see Options.usage). The Immich
// routes are the generated server stubs (ImmichDouble) behind the traffic log and the fault injector.

let options: Options
do { options = try Options.parse(Array(CommandLine.arguments.dropFirst())) } catch {
    FileHandle.standardError.write(Data("immich-double: \(error)\n\(Options.usage)\n".utf8))
    exit(2)
}

// Logs go to stderr (LOG_LEVEL, default warning): stdout carries only the listening line the tests wait for.
var logger = Logger(label: "immich-double", factory: { StreamLogHandler.standardError(label: $0) })
logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning

do {
    let files = try FileStore(root: URL(fileURLWithPath: options.data))
    let store = Store(files: files)
    let users = Users(options.users)
    let faults = FaultInjector(options.faults)
    let traffic = try options.traffic.map { try TrafficLog(path: $0) }

    let router = Router(context: DoubleContext.self)
    // Registered before the middlewares, which Hummingbird applies only to the routes added after them.
    DoubleRoutes.register(on: router, store: store, users: users, faults: faults)
    router.add(middleware: TrafficMiddleware(store: store, log: traffic))
    router.add(middleware: FaultMiddleware(injector: faults))
    try ImmichDouble(store: store, users: users, version: options.serverVersion)
        .registerHandlers(on: router, serverURL: URL(string: "/api")!,
                          // Compact JSON with millisecond dates, as Immich (NestJS) writes it.
                          configuration: .init(dateTranscoder: .iso8601WithFractionalSeconds,
                                               jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes]),
                          middlewares: [ImmichRules(users: users)])

    let app = Application(
        router: router,
        server: .http1WithFixedReceiveBuffers,
        configuration: .init(address: .hostname("127.0.0.1", port: options.port), serverName: nil),
        onServerRunning: { channel in
            // One unbuffered write: the tests read this line from a pipe as soon as the port is bound.
            let port = channel.localAddress?.port ?? options.port
            FileHandle.standardOutput.write(Data("immich-double listening on http://127.0.0.1:\(port)\n".utf8))
        },
        logger: logger)
    try await app.runService()
    traffic?.close()
} catch {
    FileHandle.standardError.write(Data("immich-double: \(error)\n".utf8))
    exit(1)
}
