import ArgumentParser
import CairnCore
import CairnImmichDestination
import CairnImport
import CairnLibrary
import CairnNarration
import CairnPipeline
import CairnReconcile
#if SharedQueue
import CairnQueue
import CairnSharedWork
#endif
import CairnStages
import CairnStatus
import CairnSync
import Foundation

/// `cairn sync SOURCE`: import what is new, and let deletions at the source reach the library safely.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Import new files and reconcile deletions: the command for cron.",
        discussion: """
            Scans SOURCE, hashes what changed, imports new content, and reconciles deletions: a file deleted at the \
            source is held by quarantine (default 14 days) before its library copy may move to the library's trash, \
            and only with --apply-deletions (or apply_deletions = true in cairn.toml). Nothing is ever unlinked: \
            trashed files are restorable with `cairn restore --run-id ID` until `cairn trash purge`.

            Safety rails hold every deletion when the source is missing, not a folder, empty, lost its \
            .cairn-source marker, or lost more than half of its files since the last run (an unmounted disk \
            looks exactly like that). The first sync of a source never trashes anything.

            The import takes --lanes, --clips, --max-errors, --max-attempts and --report as `cairn import` does; \
            given here they win over cairn.toml's `lanes` and `clips`.

            With --destination immich (see `cairn import --help`), new content goes to an Immich server and \
            deletions, after the same quarantine and rails, go to Immich's trash, tagged cairn/v1/run/<run-id>: \
            `cairn restore --run-id ID --destination immich` brings a run back. cairn never empties Immich's trash.

            Each sync checks the destination against what cairn brought there: every asset once every \
            check_destination_days (default 7; --check-destination: this run), only the destination's trash on \
            the other runs. Content deleted there (in Immich's trash, purged from it, or an original removed from \
            the library folder) is reported by the run and by `cairn status`, and left alone: such a deletion is \
            usually a person's choice. With --destination-drift restore (destination_drift = "restore" in \
            cairn.toml) it comes back while a source still holds it: restored from Immich's trash (journaled), or \
            brought in again. What cairn itself trashed is never drift.

            With --catalog (see `cairn import --help`), the sync reads and writes the library's catalog in that \
            PostgreSQL database, its deletions and trash included, under the library's lock held there; with \
            --destination immich, cairn's state for that server and user (a database of its own).

            \(ImportCommand.queueHelp)Exit codes: 0 done; 3 some files failed; 4 a safety rail held every deletion; 64 bad command line or \
            configuration; 75 another cairn process holds the library; 77 the Immich server refused the API key; \
            130 interrupted; 1 could not start.
            """
    )

    @Argument(help: "The folder to sync from (default: `source` in cairn.toml or $CAIRN_SOURCE).")
    var source: String?

    @OptionGroup var options: SyncRunOptions

    func validate() throws { try options.check(source: source) }

    func run() async throws { try await options.invocation(source: source).run() }
}

/// Every option of a sync that writes (`cairn sync`, and each run of `cairn watch`).
struct SyncRunOptions: ParsableArguments {
    @OptionGroup var library: LibraryOption
    @OptionGroup var reconcile: ReconcileOptions
    @OptionGroup var narration: NarrationOptions
    @OptionGroup var pipeline: PipelineOptions
    @OptionGroup var destination: DestinationOptions
    @OptionGroup var metrics: MetricsOptions
    @OptionGroup var catalog: CatalogLocationOption
    #if SharedQueue
    @OptionGroup var shared: SharedWorkOptions
    #endif

    func check(source: String?) throws {
        if let source, source.isEmpty { throw ValidationError("SOURCE needs a folder path.") }
        try reconcile.check(libraryRoot: library.resolvedPath, source: source, needsSource: true)
        #if SharedQueue
        let root = library.resolvedPath
        let immich = (try? destination.isImmich(libraryRoot: root)) ?? false
        try shared.check(immich: immich, libraryRoot: root, configFile: reconcile.config)
        #endif
    }

    func invocation(source: String?) -> SyncInvocation {
        var invocation = SyncInvocation(source: source, library: library, reconcile: reconcile, output: narration.mode,
                                        printsSummary: narration.printsSummary, dryRun: false, pipeline: pipeline,
                                        destination: destination, metrics: metrics)
        invocation.catalog = catalog
        #if SharedQueue
        invocation.shared = shared
        #endif
        return invocation
    }
}

/// `cairn dry-run SOURCE`: the full plan of a sync, changing nothing.
struct DryRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dry-run",
        abstract: "Show what `cairn sync` would import, trash, hold and ask about, changing nothing at all.",
        discussion: """
            Reads the source and the catalog exactly as a sync would (new files are hashed, not cached) and prints \
            the plan. The library folder and its catalog are left byte-identical; a sync run right after with the \
            same settings carries out this plan. Exit codes as for `cairn sync`.
            """
    )

    @Argument(help: "The folder to plan a sync from (default: `source` in cairn.toml or $CAIRN_SOURCE).")
    var source: String?

    @OptionGroup var library: LibraryOption
    @OptionGroup var reconcile: ReconcileOptions

    @Flag(help: "Print the plan as one JSON object.")
    var json = false

    @OptionGroup var destination: DestinationOptions
    @OptionGroup var catalog: CatalogLocationOption

    func validate() throws {
        if let source, source.isEmpty { throw ValidationError("SOURCE needs a folder path.") }
        try reconcile.check(libraryRoot: library.resolvedPath, source: source, needsSource: true)
    }

    func run() async throws {
        var invocation = SyncInvocation(source: source, library: library, reconcile: reconcile, output: .quiet,
                                        printsSummary: true, dryRun: true, planAsJSON: json, destination: destination)
        invocation.catalog = catalog
        try await invocation.run()
    }
}

/// What `sync` and `dry-run` share: settings, the run, the report, the exit code.
struct SyncInvocation {
    var source: String?
    var library: LibraryOption
    var reconcile: ReconcileOptions
    var output: NarrationOutputMode
    var printsSummary: Bool
    var dryRun: Bool
    var planAsJSON = false
    /// The command line's pipeline options, over cairn.toml's (a dry run takes none).
    var pipeline: PipelineOptions?
    var destination: DestinationOptions
    /// Metrics for Prometheus (a dry run writes none).
    var metrics: MetricsOptions?
    /// `cairn watch` runs one sync after another under its own signal handling and cancellation.
    var cancellation: PipelineCancellation?
    var handlesSignals = true
    /// Handlers that see the run's narration beside the renderer (`cairn watch`'s status lines for systemd).
    var observers: [any NarrationHandler] = []
    /// `--catalog`: the library's catalog in PostgreSQL (a dry run reads it without migrating or locking it).
    var catalog: CatalogLocationOption?
    #if SharedQueue
    /// `--queue`: the thumbnails and clips shared with workers (a dry run queues nothing).
    var shared: SharedWorkOptions?
    #endif

    func run() async throws {
        let cancellation = self.cancellation ?? PipelineCancellation()
        var uploads = ImportCommand.defaultUploads
        if let lanes = pipeline?.lanes,
           let configuration = try? PipelineConfiguration.defaults(cores: System.coreCount).applying(laneSpec: lanes) {
            uploads = configuration.transfer.width
        }
        let settings = dryRun ? nil : try? reconcile.resolve(libraryRoot: library.resolvedPath, source: source)
        var needs = ImmichPermissions.bringIn
        if let settings {
            needs.formUnion(ImmichPermissions.driftCheck)
            if settings.applyDeletions { needs.formUnion(ImmichPermissions.trash) }
            if settings.destinationCheck.mending == .restore { needs.formUnion(ImmichPermissions.restoreFromTrash) }
        }
        let immich = try await destination.connect(
            libraryRoot: library.resolvedPath, uploads: uploads, cancellation: cancellation, needs: needs)
        do {
            try await run(immich: immich, cancellation: cancellation)
            await immich?.close()
        } catch {
            await immich?.close()
            throw error
        }
    }

    /// The run on whichever catalog keeps the library's records (or, with `immich`, cairn's state for that server
    /// and user): a PostgreSQL database, else the folder's SQLite file.
    private func run(immich: ImmichDestination?, cancellation: PipelineCancellation) async throws {
        #if SharedQueue
        let root = immich?.stateRoot ?? library.resolvedPath
        if let catalog, let location = try catalog.location(libraryRoot: library.resolvedPath, stateRoot: immich?.stateRoot) {
            guard !dryRun else {
                // A dry run of a catalog in PostgreSQL reads it as it stands: no lock, no migration.
                try await CatalogAccess.reportingFailures {
                    try await CatalogAccess.readingExisting(root: root, catalog: location) { opened, catalog in
                        try await run(opened: opened, catalog: catalog, immich: immich, shared: nil, metrics: nil,
                                      cancellation: cancellation)
                    }
                }
                return
            }
            catalog.warnOfExposedPassword()
            try await run(catalog: location, root: root, immich: immich, cancellation: cancellation)
            return
        }
        if immich == nil, !dryRun, let shared, shared.isSharing(libraryRoot: library.resolvedPath, configFile: reconcile.config) {
            try await shared.run(command: "sync", libraryRoot: library.resolvedPath, configFile: reconcile.config,
                                 cancellation: cancellation) { destination in
                try await runWithSQLite(immich: nil, shared: destination, cancellation: cancellation)
            }
            return
        }
        #endif
        try await runWithSQLite(immich: immich, cancellation: cancellation)
    }

    #if SharedQueue
    /// The sync with the catalog of `root` (the library, or an Immich destination's state in it) in PostgreSQL at
    /// `location`, its lock held there.
    private func run(catalog location: PostgresLocation, root: String, immich: ImmichDestination?,
                     cancellation: PipelineCancellation) async throws {
        let settingsRoot = library.resolvedPath
        let settings = try reconcile.resolve(libraryRoot: settingsRoot, source: source)
        guard let sourcePath = settings.source else { throw ReconcileOptions.noSource(libraryRoot: settingsRoot) }
        let metricsSettings = try metrics?.settings(libraryRoot: settingsRoot, quarantineDays: settings.reconcile.quarantineDays)
        let failedFiles = FailedFiles()
        try await CatalogAccess.reportingFailures {
            try await CatalogAccess.running(catalog: location, libraryRoot: root, command: "sync", cancellation: cancellation,
                                            metrics: metricsSettings, labelRoot: settingsRoot,
                                            sourceRoot: sourcePath) { opened, catalog, runMetrics in
                guard let shared, shared.isSharing(libraryRoot: settingsRoot, configFile: reconcile.config) else {
                    return try await run(opened: opened, catalog: catalog, immich: immich, shared: nil, metrics: runMetrics,
                                         cancellation: cancellation, failedFiles: failedFiles)
                }
                try await shared.takingPart(command: "sync", library: opened, configFile: reconcile.config) { destination in
                    try await run(opened: opened, catalog: catalog, immich: nil, shared: destination, metrics: runMetrics,
                                  cancellation: cancellation, failedFiles: failedFiles)
                }
            }
        }
    }
    #endif

    /// The run with the SQLite catalog of the library, or of `immich`'s state in it; `shared`: the destination that
    /// queues the thumbnails and clips (`--queue`).
    private func runWithSQLite(immich: ImmichDestination?, shared: (any ImportDestination)? = nil,
                               cancellation: PipelineCancellation) async throws {
        // cairn.toml is the library's; the state of an Immich destination is a folder of its own inside it.
        let settingsRoot = library.resolvedPath
        let root = immich?.stateRoot ?? settingsRoot
        if dryRun, !LibraryLayout.holdsLibrary(root) {
            Output.error("\(root): no cairn library here yet; a dry run never creates one (run `cairn sync` or `cairn import`)")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        // `validate()` checked the settings and that a source is named; this guards a file edited since.
        let settings = try reconcile.resolve(libraryRoot: settingsRoot, source: source)
        guard let sourcePath = settings.source else { throw ReconcileOptions.noSource(libraryRoot: settingsRoot) }
        let metricsSettings = try metrics?.settings(libraryRoot: settingsRoot, quarantineDays: settings.reconcile.quarantineDays)
        // A sync takes the lock before the catalog is opened (and migrated); a dry run shares it later.
        let opened = try await LibraryAccess.openForRun(root: root, dryRun: dryRun, metrics: metricsSettings,
                                                        labelRoot: settingsRoot, sourceRoot: sourcePath)
        defer { opened.close() }
        let runMetrics = try await RunMetricsSession.starting(metricsSettings, layout: opened.layout,
                                                              catalog: opened.sqliteCatalog, labelRoot: settingsRoot,
                                                              sourceRoot: sourcePath)
        try await run(opened: opened, catalog: nil, immich: immich, shared: shared, metrics: runMetrics,
                      cancellation: cancellation)
    }

    /// The run on the opened library, its records in `catalog` (the library's SQLite catalog when nil);
    /// `failedFiles` hears every try's file failures (`FailedFiles`).
    private func run(opened: Library, catalog: (any ImportCatalog)?, immich: ImmichDestination?,
                     shared: (any ImportDestination)?, metrics runMetrics: RunMetricsSession?,
                     cancellation: PipelineCancellation, failedFiles: FailedFiles = FailedFiles()) async throws {
        let settingsRoot = library.resolvedPath
        let settings = try reconcile.resolve(libraryRoot: settingsRoot, source: source)
        guard let sourcePath = settings.source else { throw ReconcileOptions.noSource(libraryRoot: settingsRoot) }
        var importOptions = ImportOptions(source: sourcePath)
        importOptions.cancellation = cancellation
        importOptions.pipeline = try settings.pipelineConfiguration(cores: System.coreCount)
        if let immich {
            importOptions.destination = immich
            if pipeline?.lanes == nil { importOptions.pipeline.transfer.width = ImportCommand.defaultUploads }
        }
        #if SharedQueue
        if let shared {
            importOptions.destination = shared
            SharedQueueLanes.apply(to: &importOptions.pipeline)
        }
        #endif
        if let pipeline {
            importOptions.pipeline = try pipeline.applied(to: importOptions.pipeline)
            importOptions.keepsOutcomes = pipeline.report != nil
            importOptions.retryFailed = pipeline.retryFailed
        }
        var options = SyncOptions(importOptions: importOptions, settings: settings.reconcile)
        options.applyDeletions = settings.applyDeletions
        options.destinationCheck = settings.destinationCheck
        options.destinationCheck.fullNow = reconcile.checkDestination
        options.acceptVanished = reconcile.acceptVanished
        options.dryRun = dryRun
        let (renderer, ticker) = planAsJSON ? (DiscardingNarrationHandler(), nil) : NarrationOptions.makeRenderer(mode: output)
        defer { ticker?.cancel() }
        let signals = handlesSignals ? SignalHandling.install(cancellation: importOptions.cancellation) { name in
            Output.error("\(name): stopping; work in flight gets a few seconds to finish (again to exit at once)")
        } : nil
        defer { signals?.uninstall() }
        failedFiles.beginTry()
        let output = MultiplexNarrationHandler([renderer, failedFiles] + (runMetrics.map { [$0.handler] } ?? []) + observers)
        let summary = try await RunExit.reportingFailure(metrics: runMetrics) {
            var run = SyncRun(library: opened, options: options, output: output)
            run.catalog = catalog
            return try await run.run()
        }
        let (exitStatus, failedEarlier) = failedFiles.settled(summary.exitStatus)
        await runMetrics?.finish(exitStatus: exitStatus, sourceHealth: LibraryMetricsReader.sourceHealth(summary.plan.verdict))
        ticker?.cancel()
        pipeline?.writeReport(summary.imported)
        if planAsJSON {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            encoder.dateEncodingStrategy = Timestamp.jsonEncoding
            Output.line(String(decoding: try encoder.encode(summary.plan), as: UTF8.self))
        } else if printsSummary {
            let names = try await PlanText.names(in: summary, catalog: catalog ?? opened.sqliteCatalog as any ImportCatalog)
            Output.line(PlanText.render(summary, names: names))
            if let imported = summary.imported { Output.line(SummaryText.render(imported, libraryRoot: opened.layout.root)) }
            if failedEarlier > 0 { Output.line(FailedFiles.summaryLine(failedEarlier)) }
        }
        if exitStatus != .success { throw ExitCode(exitStatus.rawValue) }
    }
}

/// A plan as a person reads it: each list with file names and dates.
enum PlanText {
    /// Where the content the plan names came from: the source path a trashed asset was journaled with, else the
    /// first source path of its asset.
    static func names(in summary: SyncSummary, catalog: any ImportCatalog) async throws -> [Checksum: String] {
        let plan = summary.plan
        var names: [Checksum: String] = [:]
        for item in summary.trashed?.trashed ?? [] { names[item.checksum] = item.sourcePath }
        let named = plan.deleteCandidates.map(\.checksum) + plan.heldByQuarantine.map(\.checksum)
            + plan.pendingReview.map(\.checksum) + plan.heldBySafetyRail.map(\.checksum)
        for checksum in named where names[checksum] == nil {
            names[checksum] = try await catalog.asset(checksum)?.firstSourcePath
        }
        return names
    }

    static func render(_ summary: SyncSummary, names: [Checksum: String]) -> String {
        let plan = summary.plan
        func name(_ checksum: Checksum) -> String {
            "\(checksum.hex.prefix(12))  \(names[checksum] ?? "(not in the library)")"
        }
        var lines = [(summary.dryRun ? "Dry run" : "Sync") + " of \(summary.sourceRoot): " + plan.summary]
        for trip in plan.verdict.holds { lines.append("  held: \(trip.reason)") }
        for trip in plan.verdict.limits + plan.verdict.warnings { lines.append("  note: \(trip.reason)") }
        let trashVerb = summary.dryRun ? "would trash" : (summary.trashed == nil ? "may trash (add --apply-deletions)" : "trashed")
        for candidate in plan.deleteCandidates { lines.append("  \(trashVerb): \(name(candidate.checksum))  [\(candidate.basis.rawValue)]") }
        for hold in plan.heldByQuarantine {
            lines.append("  quarantined until \(Timestamp.toTheSecond(hold.eligibleAt)): \(name(hold.checksum))")
        }
        for item in plan.pendingReview { lines.append("  waits for review: \(name(item.checksum))  (cairn pending approve|exclude)") }
        for candidate in plan.heldBySafetyRail { lines.append("  held by a safety rail: \(name(candidate.checksum))") }
        if let trashed = summary.trashed {
            for failure in trashed.failures { lines.append("  could not trash \(failure.path): \(failure.reason)") }
            for settled in trashed.settled { lines.append("  settled: \(settled)") }
        }
        return lines.joined(separator: "\n")
    }
}
