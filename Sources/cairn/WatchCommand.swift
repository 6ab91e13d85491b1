import ArgumentParser
import CairnCore
import CairnNarration
import CairnRun
import CairnServe
import CairnStages
import CairnWatch
import Dispatch
import Foundation

/// `cairn watch SOURCE`: a long-running sync that follows the source as it changes.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Sync SOURCE whenever it changes: inotify, debounced, one run at a time, with a periodic full sync.",
        discussion: """
            Runs a sync at start, then whenever the source tree has been quiet for --debounce seconds after a \
            change (or --max-delay after the first change of a burst that never quiets). Changes during a run \
            start one more run after it, however many there were. A full sync runs --full-sync-every after the \
            last run in any case. Every run is a `cairn sync` with the same rails, quarantine and settings \
            (cairn.toml, CAIRN_*, the flags below).

            With --listen it serves the status page, /status.json and /metrics as `cairn serve` does.

            Under systemd use Type=notify: it sends READY=1 once watching, STATUS= lines with the phase, \
            WATCHDOG=1 at half of WatchdogSec, and STOPPING=1. SIGTERM or SIGINT stops it between items; what \
            was done is kept and the next run resumes (exit 0). A second signal exits at once (130).

            Exit codes: 0 stopped by SIGTERM or SIGINT; 1 the source cannot be watched; 64 bad command line or \
            configuration; 130 a second signal. Each run's own outcome is in its log line, `cairn status` and the \
            metrics.
            """
    )

    @Argument(help: "The folder to watch and sync from (default: `source` in cairn.toml or $CAIRN_SOURCE).")
    var source: String?

    @OptionGroup var options: SyncRunOptions

    @Option(help: "Seconds the source must stay quiet after a change before a sync starts.")
    var debounce: Double = 5

    @Option(name: .customLong("max-delay"), help: "Seconds after the first change of a burst when a sync starts even if changes go on.")
    var maxDelay: Double = 120

    @Option(name: .customLong("full-sync-every"), help: "Hours between full syncs when nothing is reported changed (a safety net for missed events).")
    var fullSyncHours: Double = 6

    @Option(help: "Also serve the status page and /metrics at HOST:PORT, as `cairn serve` does.")
    var listen: String?

    @Option(name: .customLong("token-file"), help: "The bearer token file for --listen beyond loopback (see `cairn serve --help`).")
    var tokenFile: String?

    func validate() throws {
        guard debounce > 0, maxDelay >= debounce, fullSyncHours > 0 else {
            throw ValidationError("--debounce must be above 0, --max-delay at least --debounce, --full-sync-every above 0")
        }
        if let listen {
            guard let address = ListenAddress(listen) else { throw ValidationError("--listen: '\(listen)' is not HOST:PORT") }
            if !address.isLoopback, tokenFile == nil {
                throw ValidationError("--listen \(listen) reaches beyond this machine: give --token-file FILE")
            }
        }
        if options.reconcile.acceptVanished {
            throw ValidationError("--accept-vanished stands the mass-vanish rail down for one run; `cairn watch` runs "
                                  + "syncs for ever, so give it to a single `cairn sync` instead")
        }
        try options.check(source: source)
    }

    func run() async throws {
        let root = options.library.resolvedPath
        let settings = try options.reconcile.resolve(libraryRoot: root, source: source)
        guard let sourcePath = settings.source else { throw ReconcileOptions.noSource(libraryRoot: root) }
        let notifier = SystemdNotifier()
        let cancellation = PipelineCancellation()
        let inputs = AsyncStream<WatchScheduler.Input>.makeStream(bufferingPolicy: .unbounded)
        let signals = SignalHandling.install(cancellation: cancellation) { name in
            Output.error("\(name): stopping after the items in flight; again to exit at once")
            inputs.continuation.yield(.stop)
        }
        defer { signals.uninstall() }

        let forward: @Sendable (TreeWatcher.Event) -> Void = { event in
            switch event {
            case .changed: inputs.continuation.yield(.changed)
            case .overflowed(let reason):
                if let reason { Output.error(reason) }
                inputs.continuation.yield(.overflowed)
            }
        }
        let watcher: TreeWatcher
        do {
            watcher = try TreeWatcher(root: sourcePath, onEvent: forward)
        } catch {
            throw Output.fail("cannot watch \(sourcePath): \(error.description)")
        }
        Output.error("watching \(sourcePath) (\(Self.folders(watcher.watchedFolders))) for \(root)")

        var server: Task<Void, Never>?
        if let listen, let address = ListenAddress(listen) {
            let token = try tokenFile.map(ServeCommand.readToken)
            var status = StatusServer(catalog: try CatalogAccess.statusSource(libraryRoot: root, catalog: options.catalog),
                                      listen: address, token: token, quarantineDays: settings.reconcile.quarantineDays)
            status.onListening = { port in Output.error("serving on http://\(ListenAddress(host: address.host, port: port))/") }
            if let location = try options.shared.queue.location(libraryRoot: root, configFile: options.reconcile.config) {
                status.queueStatus = { try await SharedQueueService.status(at: location) }
            }
            server = Task {
                do { try await status.run(stopsOnSignals: false) } catch { Output.error("--listen \(listen): \(error)") }
            }
        }
        defer { server?.cancel() }
        try? notifier?.ready(status: "watching \(sourcePath)")
        let watchdog = SystemdNotifier.watchdogInterval().flatMap { interval in
            notifier.map { notifier in
                Task {
                    while !Task.isCancelled {
                        try? notifier.watchdog()
                        try? await Task.sleep(for: .seconds(interval))
                    }
                }
            }
        }
        defer { watchdog?.cancel() }
        let ticker = Task {
            var ticks = 0
            while !Task.isCancelled {
                inputs.continuation.yield(.tick)
                ticks += 1
                // A source that was missing or unmounted is looked for every 10 s; its return is a change.
                if ticks % 40 == 0, watcher.rewatchIfNeeded(onEvent: forward) {
                    Output.error("watching \(sourcePath) again (\(Self.folders(watcher.watchedFolders)))")
                    inputs.continuation.yield(.changed)
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        defer { ticker.cancel() }

        let clock = ContinuousClock()
        let start = clock.now
        func seconds() -> Double { (clock.now - start).seconds }
        var scheduler = WatchScheduler(
            settings: .init(quiet: debounce, maxDelay: maxDelay, fullSyncInterval: fullSyncHours * 3600), now: seconds())
        var runs = 0
        loop: for await input in inputs.stream {
            for decision in scheduler.handle(input, now: seconds()) {
                switch decision {
                case .startRun(let reason):
                    runs += 1
                    let number = runs
                    try? notifier?.status("syncing \(sourcePath) (\(reason.rawValue))")
                    let invocation = syncInvocation(cancellation: cancellation, notifier: notifier)
                    Task {
                        let status = await Self.run(invocation)
                        Output.error("run \(number) (\(reason.rawValue)) ended: \(status.summary)")
                        try? notifier?.status("watching \(sourcePath); last sync \(Timestamp.toTheSecond(Date())): \(status.summary)")
                        inputs.continuation.yield(.runEnded)
                    }
                case .cancelRun:
                    break  // the signal handler has already told the run to stop
                case .exit:
                    break loop
                }
            }
        }
        try? notifier?.stopping()
        Output.error("stopped after \(runs) run\(runs == 1 ? "" : "s")")
    }

    private func syncInvocation(cancellation: PipelineCancellation, notifier: SystemdNotifier?) -> SyncInvocation {
        var invocation = options.invocation(source: source)
        invocation.cancellation = cancellation
        invocation.handlesSignals = false
        if let notifier { invocation.observers = [PhaseStatusNotifier(notifier: notifier)] }
        return invocation
    }

    static func folders(_ count: Int) -> String { "\(count) folder\(count == 1 ? "" : "s")" }

    /// One sync; its exit status, whatever it threw.
    private static func run(_ invocation: SyncInvocation) async -> ExitStatus {
        do {
            try await invocation.run()
            return .success
        } catch let code as ExitCode {
            return ExitStatus(rawValue: code.rawValue) ?? .failure
        } catch {
            Output.error("\(error)")
            return .failure
        }
    }
}

/// Tells systemd the phase a run is in (`STATUS=`), as `systemctl status` shows it.
struct PhaseStatusNotifier: NarrationHandler {
    let notifier: SystemdNotifier

    func handle(_ record: NarrationRecord) {
        guard case .phaseStart(let phase, _) = record.event else { return }
        try? notifier.status("syncing: \(phase.displayName.lowercased())")
    }
}
