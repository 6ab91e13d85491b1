import ArgumentParser
import CairnConfiguration
import CairnCore
import CairnLibrary
import CairnRun
import CairnServe
import Foundation

/// `cairn serve`: the library's status page, status.json and Prometheus metrics over HTTP, read-only.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the library's status page, /status.json and /metrics over HTTP, read-only.",
        discussion: """
            Routes: / (the status page: last run, timeline of recent runs, counts, failed files, what waits for \
            review and the newest imports, with thumbnails; with JavaScript it also follows the running import or \
            sync live: progress with the time left, phases, lanes, activity, failures and thumbnails as they come), \
            /events (the runs as they happen, as Server-Sent Events: each line of the run logs under runs/, with \
            ids a client resumes from with Last-Event-ID), /tapes/NAME/… (a tape's playlist, segments and \
            tape.mp4, which the page plays), /queue.json (with --queue, or a queue in the library's cairn.toml: \
            what `cairn queue status --json` says, shown on the page and read again every few seconds), \
            /status.json (what `cairn status --json` says), /metrics (Prometheus) and /healthz. It reads the catalog without the run lock, so it answers while a \
            sync runs, and it never writes: the library's SQLite file or, for a library whose catalog is in \
            PostgreSQL, that database (named as for `cairn import`, or as the library folder records it), connected \
            to for each request and never migrated. A catalog that cannot be read (its database down) answers 503 \
            with the reason.

            It listens on 127.0.0.1:8080 unless told otherwise. To listen beyond this machine, give \
            --token-file: every request but /healthz must then carry `Authorization: Bearer <token>` (Prometheus: \
            `authorization: {credentials_file: …}` in the scrape config), or a browser signs in once (the form at \
            /signin, or one visit to /?token=…) and gets an HttpOnly, SameSite=Strict cookie. On loopback it \
            answers only requests that name this machine (127.0.0.1, localhost, ::1), which keeps other sites' \
            pages out. SIGINT or SIGTERM stops it (exit 0).
            """
    )

    @OptionGroup var library: LibraryOption

    @Option(help: "Where to listen, as HOST:PORT ([::1]:PORT for IPv6; port 0 picks a free one).")
    var listen: String = ListenAddress.default.description

    @Option(name: .customLong("token-file"),
            help: "A file whose first line is the bearer token every request but /healthz must carry (needed beyond loopback).")
    var tokenFile: String?

    @OptionGroup var catalog: CatalogLocationOption

    /// The shared queue shown on the page and at /queue.json.
    @OptionGroup var queue: QueueLocationOption

    func validate() throws {
        guard let address = ListenAddress(listen) else {
            throw ValidationError("--listen: '\(listen)' is not HOST:PORT (for example 127.0.0.1:8080)")
        }
        if !address.isLoopback, tokenFile == nil {
            throw ValidationError("--listen \(listen) reaches beyond this machine: give --token-file FILE, "
                                  + "or listen on 127.0.0.1 and reach it through a tunnel or a proxy")
        }
    }

    func run() async throws {
        let root = try library.existingRoot()
        let token = try tokenFile.map(ServeCommand.readToken)
        catalog.warnOfExposedPassword()
        let quarantine = (try? CairnConfiguration.resolve(configFile: nil, libraryRoot: root))?.reconcile.quarantineDays
        var server = StatusServer(catalog: try CatalogAccess.statusSource(libraryRoot: root, catalog: catalog),
                                  listen: ListenAddress(listen) ?? .default, token: token, quarantineDays: quarantine)
        if let location = try queue.location(libraryRoot: root) {
            queue.warnOfExposedPassword()
            server.queueStatus = { try await SharedQueueService.status(at: location) }
        }
        let host = server.listen.host
        server.onListening = { port in
            Output.error("serving \(root) on http://\(ListenAddress(host: host, port: port))/ (read-only)")
        }
        // A library whose files are in a store: the page's thumbnails are read from there.
        try await StoreOption.withRecorded(libraryRoot: root) { store in
            var server = server
            server.store = store
            try await server.run()
        }
    }

    /// The token from its file's first line; a file that other users may read gets a warning.
    static func readToken(_ path: String) throws -> String {
        let secret: SecretFile
        do { secret = try SecretFile(path: path) } catch { throw ValidationError("--token-file \(path): \(error.description)") }
        if secret.othersMayRead { Output.error("the token file \(path) can be read by other users; make it private: chmod 600 \(path)") }
        return secret.value
    }
}
