import ArgumentParser
import CairnConfiguration
import CairnCore
import CairnImmichDestination
import CairnImport
import CairnLibrary
import CairnNarration
import CairnPipeline
import CairnReconcile
import CairnRun
import CairnS3
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
    @OptionGroup var shared: SharedWorkOptions

    func check(source: String?) throws {
        if let source, source.isEmpty { throw ValidationError("SOURCE needs a folder path.") }
        try reconcile.check(libraryRoot: library.resolvedPath, source: source, needsSource: true)
        let root = library.resolvedPath
        let immich = (try? destination.isImmich(libraryRoot: root)) ?? false
        try shared.check(immich: immich, libraryRoot: root, configFile: reconcile.config)
    }

    func invocation(source: String?) -> SyncInvocation {
        var invocation = SyncInvocation(source: source, library: library, reconcile: reconcile, output: narration.mode,
                                        printsSummary: narration.printsSummary, dryRun: false, pipeline: pipeline,
                                        destination: destination, metrics: metrics)
        invocation.catalog = catalog
        invocation.shared = shared
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
    /// `--queue`: the thumbnails and clips shared with workers (a dry run queues nothing).
    var shared: SharedWorkOptions?

    func run() async throws {
        let cancellation = self.cancellation ?? PipelineCancellation()
        // cairn.toml is the library's (the state of an Immich destination is a folder of its own inside it), read
        // once for the whole run. `validate()` checked it and that a source is named; this guards a file edited since.
        let settingsRoot = library.resolvedPath
        let settings = try reconcile.resolve(libraryRoot: settingsRoot, source: source)
        guard let sourcePath = settings.source else { throw ReconcileOptions.noSource(libraryRoot: settingsRoot) }
        var uploads = ImportCommand.defaultUploads
        if let lanes = pipeline?.lanes,
           let configuration = try? PipelineConfiguration.defaults(cores: System.coreCount).applying(laneSpec: lanes) {
            uploads = configuration.transfer.width
        }
        var needs = ImmichPermissions.bringIn
        if !dryRun {
            needs.formUnion(ImmichPermissions.driftCheck)
            if settings.applyDeletions { needs.formUnion(ImmichPermissions.trash) }
            if settings.destinationCheck.mending == .restore { needs.formUnion(ImmichPermissions.restoreFromTrash) }
            if pipeline?.tagsAsked == true { needs.formUnion(ImmichPermissions.tags) }
        }
        let immich = try await destination.connect(
            libraryRoot: settingsRoot, uploads: uploads, cancellation: cancellation, needs: needs)
        try await closing({ await immich?.close() }) {
            var request = RunRequest(command: "sync", libraryRoot: settingsRoot, stateRoot: immich?.stateRoot,
                                     sourceRoot: sourcePath)
            request.readOnly = dryRun
            request.catalog = try catalog?.location(libraryRoot: settingsRoot, stateRoot: immich?.stateRoot)
            if request.catalog != nil, !dryRun { catalog?.warnOfExposedPassword() }
            if immich == nil, !dryRun {
                request.sharedWork = try shared?.request(libraryRoot: settingsRoot, configFile: reconcile.config)
            }
            request.metrics = dryRun ? nil
                : try metrics?.settings(libraryRoot: settingsRoot, quarantineDays: settings.reconcile.quarantineDays)
            request.cancellation = cancellation
            let files = try await openStore(request, immich: immich)
            request.store = files
            try await closing({ await files?.close() }) {
                try await run(request, settings: settings, immich: immich, files: files, cancellation: cancellation)
            }
        }
    }

    /// The store of a library whose files are in one (it records which): the sync goes into it (its queued work
    /// too), and its trash is a state in the catalog there (`StoreTrash`).
    private func openStore(_ request: RunRequest, immich: ImmichDestination?) async throws
        -> S3Store? {
        guard immich == nil, let location = try StoreOption.location(flag: nil, libraryRoot: request.libraryRoot) else { return nil }
        // A dry run changes nothing, in the store either.
        if request.readOnly { return try await StoreOption.connect(location) }
        return try await StoreOption.open(location, libraryRoot: request.libraryRoot, sharedCatalog: request.catalog != nil)
    }

    /// The sync, opened by `RunAssembly` as `request` says (again, should its PostgreSQL catalog lose its working
    /// tables: `FailedFiles` carries what each try failed to the exit).
    private func run(_ request: RunRequest, settings: CairnConfiguration, immich: ImmichDestination?, files: S3Store?,
                     cancellation: PipelineCancellation) async throws {
        var importOptions = ImportOptions(source: request.sourceRoot)
        importOptions.cancellation = cancellation
        importOptions.pipeline = try settings.pipelineConfiguration(cores: System.coreCount)
        importOptions.archives = pipeline?.archives ?? settings.archives
        importOptions.filter = pipeline?.filter ?? ImportFilter()
        importOptions.tags = pipeline?.tags ?? []
        importOptions.sessionTag = pipeline?.sessionTag ?? false
        importOptions.stacks = pipeline?.stacks != .off
        if let immich {
            importOptions.destination = immich
            if pipeline?.lanes == nil { importOptions.pipeline.transfer.width = ImportCommand.defaultUploads }
        }
        if request.sharedWork != nil { SharedQueueLanes.apply(to: &importOptions.pipeline) }
        if let files {
            importOptions.destination = LibraryDestination(store: files, folderRoot: request.libraryRoot)
        }
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
        let failedFiles = FailedFiles()
        let shell = RunShell(mode: output, handlesSignals: handlesSignals, observers: observers, silent: planAsJSON)
        try await CatalogAccess.reportingFailures {
            try await RunAssembly.open(request, notice: { Output.error($0) }) { context in
                var options = options
                if let queued = context.sharedDestination { options.importOptions.destination = queued }
                try await shell.perform(context, cancellation: cancellation, failedFiles: failedFiles, run: { output in
                    try await SyncRun(library: context.library, catalog: context.catalog, options: options,
                                      output: output).run()
                }, ending: {
                    RunShell.Ending(exitStatus: $0.exitStatus, sourceHealth: LibraryMetricsReader.sourceHealth($0.plan.verdict))
                }, present: { summary, failedEarlier in
                    try await present(summary, failedEarlier: failedEarlier, context: context)
                })
            }
        }
    }

    /// What a person (or, with --json, a program) reads after the run.
    private func present(_ summary: SyncSummary, failedEarlier: Int, context: RunContext) async throws {
        pipeline?.writeReport(summary.imported)
        if planAsJSON {
            Output.line(String(decoding: try Timestamp.jsonEncoder(pretty: true).encode(summary.plan), as: UTF8.self))
        } else if printsSummary {
            let names = try await PlanText.names(in: summary, catalog: context.catalog)
            Output.line(PlanText.render(summary, names: names))
            if let imported = summary.imported {
                Output.line(SummaryText.render(imported, libraryRoot: context.library.layout.root))
            }
            if failedEarlier > 0 { Output.line(FailedFiles.summaryLine(failedEarlier)) }
        }
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
