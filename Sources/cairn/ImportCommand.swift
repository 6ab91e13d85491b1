import ArgumentParser
import CairnConfiguration
import CairnCore
import CairnImmichDestination
import CairnImport
import CairnLibrary
import CairnNarration
import CairnPipeline
import CairnRun
import CairnS3
import CairnStages
import Foundation

/// `cairn import SOURCE`: bring a folder's photos and videos into the library.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a folder's photos and videos into the library.",
        discussion: """
            Walks SOURCE (never following symbolic links), hashes new and changed files (unchanged ones reuse \
            their cached SHA1), and brings content the library does not hold yet through four lanes: transfer \
            (copy into the content-addressed store, verified by a hash taken while copying), metadata (probe), \
            thumbnail (thumbnail and preview; an upright sRGB JPEG of at most 1440 px on its short side and \
            4 bits a pixel is its own preview, so none is written) and synthesis (a short clip of each still; lowest priority, \
            --clips off skips it). Every item's state is in the catalog: a run that is stopped or killed \
            resumes where it stood. Importing the same folder again does no work for files that did not \
            change. Identical content under two names becomes one asset.

            --lanes sets lane widths and timeouts, e.g. --lanes transfer=4,thumbnail=2,synthesis=1,\
            timeout.thumbnail=2m (defaults scale with cores); the decoding lanes also start as many phases again \
            ahead of their runners, whose in-flight marks commit while the work before them runs (ahead.<lane>=N \
            sets that; 0 turns it off), and the thumbnail lane has one more runner that only files of at most \
            1 MiB take. Files bigger than that are decoded at most one per core at once over the three decoding \
            lanes together, as more would only wait for a core (decoders=N sets that). --memory 512M bounds what decodes and encodes hold at once, by each file's estimate from \
            its probe (default: the cgroup's limit less a margin, or half the RAM; `cairn config` shows it): a \
            phase waits for room, one larger than the budget runs alone, and one larger than the cgroup allows \
            fails with its reason instead of the kernel killing the run. The library's cairn.toml `lanes`, \
            `clips` and `memory` apply as they do for `cairn sync`; options given here win. A timed-out or I/O-failed phase is retried with \
            backoff (--max-attempts); corrupt or unsupported media fails at once.

            --derivatives off archives only: originals are hashed, deduplicated, copied and catalogued, and each \
            waits for its probe, thumbnail, preview and clip; `cairn status` counts them, and the next import or \
            sync without the option makes them.

            SIGINT or SIGTERM (Ctrl-C): no new work starts, work in flight gets 5 s to finish, what was done \
            is kept and printed, exit 130; the next run resumes. A second signal exits at once.

            Progress is a live view on a terminal, plain lines otherwise (cron), NDJSON with --json. Every \
            event is also kept in <library>/runs/<run-id>.ndjson; `cairn status` reports the last run.

            --destination immich uploads to an Immich server (3.0 or newer) instead: --immich-url URL, the key \
            in $CAIRN_IMMICH_API_KEY or --immich-api-key-file FILE (never printed). Content the server holds is not \
            sent again, content in its trash is restored, Live Photos are linked, XMP sidecars go with their \
            media; --album NAME or --album-from folder|takeout fill albums; --lanes upload=N sets the uploads in \
            flight (default 4). cairn's state for the server lives in <library>/immich/<server>/<user id>/.

            \(Self.queueHelp)Exit codes: 0 all imported; 3 some files failed, or --max-errors stopped the run (each failure \
            is listed with its reason); 130 interrupted by a signal (the next run resumes); 75 another cairn \
            process holds the library; 64 the command line was wrong (no such SOURCE folder, a bad --lanes or --memory); \
            77 the Immich server refused the API key (nothing lost; the next run resumes); 1 the run could not \
            start (an unusable library, an unreachable or too old Immich server).
            """
    )

    static var queueHelp: String { RunAssembly.hasPostgres ? postgresHelp : "" }

    private static let postgresHelp = """
        --queue postgres://… (or $CAIRN_QUEUE, or `queue` in the library's cairn.toml) shares the thumbnails and clips with `cairn worker` processes, on \
        this host or others that mount the library folder (or, with --store, that reach the store: they need no \
        folder of the library's at all): each new file's derivative jobs go to that PostgreSQL \
        database, this import runs --work-lanes of them itself (default one per core), and it records each job's \
        files in its catalog as the job ends; stopped while its jobs wait, it takes what the workers finished \
        on its next run. --no-wait ends the run once the originals are in and their jobs are queued (they \
        count as archived); the next run, waiting or not, records what the workers made. It also holds the library's lock in that database, so an import or sync of the same \
        library on another host exits 75 while this one runs. See `cairn worker --help`.

        --catalog postgres://… (or $CAIRN_CATALOG, or `catalog` in cairn.toml; a password in $PGPASSWORD) keeps the \
        library's catalog in that PostgreSQL database instead of its SQLite file, for a library folder shared over \
        NFS, where SQLite must not live: no catalog.sqlite is made, the run's own tables live on its database \
        connection, and the library's lock is held in the database too. The first such import records the database \
        in <library>/.cairn-catalog (without the password): every later command uses it without the flag (the \
        read side, status, ls, asset, albums, pending list, dry-run and serve, without changing it), and a \
        library whose catalog is its SQLite file is not moved. With \
        --queue as well, the jobs go through the queue and their files are recorded in this catalog (the two may \
        share one database). Metrics (--metrics-file, --metrics-push) read it too. With --destination immich it keeps \
        cairn's state for that server and user instead, recorded in <library>/immich/<server>/<user id>/, and needs \
        a database of its own: one database holds one catalog.


        """

    @Argument(help: "The folder to import from (a phone dump, a camera card, a synced folder).")
    var source: String

    @OptionGroup var library: LibraryOption

    @OptionGroup var narration: NarrationOptions

    @Option(name: .customLong("hash-threads"),
            help: "How many files to hash at once (default: one per core, four per core for small files, whose reads wait on the disk).")
    var hashThreads: Int?

    @Option(name: .customLong("copy-threads"), help: "How many files to copy into the library at once (the transfer lane's width).")
    var copyThreads: Int?

    @OptionGroup var pipeline: PipelineOptions

    @OptionGroup var destination: DestinationOptions

    @OptionGroup var metrics: MetricsOptions

    @OptionGroup var shared: SharedWorkOptions

    @OptionGroup var catalog: CatalogLocationOption

    @OptionGroup var store: StoreOption

    /// Uploads in flight to an Immich server unless --lanes or --copy-threads say otherwise.
    static let defaultUploads = 4

    func validate() throws {
        guard (hashThreads ?? 1) >= 1, (copyThreads ?? 1) >= 1 else { throw ValidationError("Thread counts must be at least 1.") }
        let root = library.resolvedPath
        let immich = (try? destination.isImmich(libraryRoot: root)) ?? false
        try shared.check(immich: immich, libraryRoot: root)
        _ = try pipelineConfiguration(settings())
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) else {
            throw ValidationError("\(source): no such folder (is the disk mounted?)")
        }
        guard isDirectory.boolValue else { throw ValidationError("\(source): not a folder; cairn imports folders") }
        if try store.location(libraryRoot: root) != nil, immich {
            throw ValidationError("--store keeps a library's files; an Immich server keeps its own")
        }
    }

    /// The library's `cairn.toml` (`lanes`, `clips`; `CAIRN_*` variables over it) as `sync` reads it, then
    /// --copy-threads, then the pipeline options.
    func pipelineConfiguration(_ settings: CairnConfiguration) throws -> PipelineConfiguration {
        var configuration = try settings.pipelineConfiguration(cores: System.coreCount)
        if let copyThreads { configuration.transfer.width = copyThreads }
        if shared.isSharing(libraryRoot: library.resolvedPath) { SharedQueueLanes.apply(to: &configuration) }
        return try pipeline.applied(to: configuration)
    }

    /// The library's `cairn.toml` with the `CAIRN_*` variables over it.
    func settings() throws -> CairnConfiguration {
        try CairnConfiguration.forCommand(libraryRoot: library.resolvedPath)
    }

    func run() async throws {
        var options = ImportOptions(source: source)
        let settings = try settings()
        options.pipeline = try pipelineConfiguration(settings)
        options.archives = pipeline.archives ?? settings.archives
        options.hashWorkers = hashThreads
        options.keepsOutcomes = pipeline.report != nil
        options.retryFailed = pipeline.retryFailed
        options.filter = pipeline.filter
        options.tags = pipeline.tags
        options.sessionTag = pipeline.sessionTag
        options.stacks = pipeline.stacks != .off
        if try destination.isImmich(libraryRoot: library.resolvedPath), pipeline.lanes == nil, copyThreads == nil {
            options.pipeline.transfer.width = Self.defaultUploads
        }
        // An Immich destination is reached (and its key checked) before anything else; cairn's state for it is a
        // folder of its own under the library, per server and user.
        let immich = try await destination.connect(libraryRoot: library.resolvedPath,
                                                   uploads: options.pipeline.transfer.width,
                                                   cancellation: options.cancellation,
                                                   needs: ImmichPermissions.bringIn.union(pipeline.tagsAsked ? ImmichPermissions.tags : []))
        if let immich { options.destination = immich }
        let files = try await StoreOption.open(
            try store.location(libraryRoot: library.resolvedPath), libraryRoot: library.resolvedPath,
            sharedCatalog: immich == nil && (try catalog.location(libraryRoot: library.resolvedPath, stateRoot: nil)) != nil)
        if let files {
            options.destination = LibraryDestination(store: files, folderRoot: library.resolvedPath)
        }
        try await closing({ await immich?.close(); await files?.close() }) {
            try await run(options, immich: immich, files: files)
        }
    }

    /// The run, opened by `RunAssembly` on whichever catalog keeps the library's records (or, with `immich`,
    /// cairn's state for that server and user), with the shared queue when one is named (and `files`, the store the
    /// library's files are in, for its jobs).
    private func run(_ options: ImportOptions, immich: ImmichDestination?, files: S3Store?) async throws {
        let root = library.resolvedPath
        var request = RunRequest(command: "import", libraryRoot: root, stateRoot: immich?.stateRoot, sourceRoot: source)
        request.catalog = try catalog.location(libraryRoot: root, stateRoot: immich?.stateRoot)
        if request.catalog != nil { catalog.warnOfExposedPassword() }
        request.sharedWork = immich == nil ? try shared.request(libraryRoot: root) : nil
        request.metrics = try metrics.settings(libraryRoot: root, quarantineDays: nil)
        request.cancellation = options.cancellation
        let failedFiles = FailedFiles()
        let shell = RunShell(mode: narration.mode)
        request.store = files
        try await CatalogAccess.reportingFailures {
            try await RunAssembly.open(request, notice: { Output.error($0) }) { context in
                var options = options
                if let queued = context.sharedDestination { options.destination = queued }
                try await shell.perform(context, cancellation: options.cancellation, failedFiles: failedFiles, run: { output in
                    try await ImportRun(library: context.library, catalog: context.catalog, options: options,
                                        narration: RunNarration(layout: context.library.layout, output: output)).run()
                }, ending: { RunShell.Ending(exitStatus: $0.exitStatus) }, present: { summary, failedEarlier in
                    pipeline.writeReport(summary)
                    guard narration.printsSummary else { return }
                    Output.line(SummaryText.render(summary, libraryRoot: context.library.layout.root))
                    if failedEarlier > 0 { Output.line(FailedFiles.summaryLine(failedEarlier)) }
                })
            }
        }
    }
}

/// The end-of-run summary a person reads.
enum SummaryText {
    static func render(_ summary: ImportSummary, libraryRoot: String) -> String {
        let c = summary.counts
        var lines = [
            "Imported \(summary.sourceRoot) into \(libraryRoot) (run \(summary.runID)) in \(String(format: "%.2f", summary.elapsedSeconds)) s",
            "  files seen   \(c.filesSeen)",
            "  new          \(c.imported)  (\(NarrationFormat.bytes(c.bytesCopied)) copied)",
            "  duplicates   \(c.duplicates)",
            "  unchanged    \(c.unchanged)",
            "  hashed       \(c.hashed)  (\(NarrationFormat.bytes(c.bytesHashed)))",
            "  skipped      \(c.skipped)  (\(summary.otherFiles) not media, \(summary.symlinksSkipped.count) symbolic links"
                + summary.heldBack.sorted { $0.key < $1.key }.map { ", \($0.value) \($0.key)" }.joined() + ")",
            "  failed       \(c.failed)",
        ]
        if c.keptWithoutPreview > 0 {
            lines.insert("  kept         \(c.keptWithoutPreview) without preview (originals safe; cairn cannot render them here)",
                         at: lines.count - 1)
        }
        if c.restored > 0 {
            lines.insert("  restored     \(c.restored) from Immich's trash (the source still holds them)", at: 4)
        }
        if c.archived > 0 {
            let why = summary.derivativesLeftToWorkers
                ? "--no-wait; the queue's workers make their previews, the next run records them"
                : "--derivatives off; a run without it makes their previews"
            lines.insert("  archived     \(c.archived) originals only (\(why))", at: lines.count - 1)
        }
        let unfinished = summary.unfinished
        switch summary.outcome {
        case .interrupted: lines.append("  interrupted  \(unfinished) items resume on the next run")
        case .stoppedAtErrorLimit: lines.append("  stopped      at the error limit; \(unfinished) items resume on the next run")
        default: break
        }
        for kept in summary.keptWithoutPreview {
            lines.append("  kept without preview: \(kept.relativePath): \(kept.reason)")
        }
        for failure in summary.failures {
            lines.append("  failed: \(failure.relativePath): \(failure.reason)")
        }
        for issue in summary.scanIssues {
            lines.append("  unreadable: \(issue.relativePath): \(issue.reason)")
        }
        return lines.joined(separator: "\n")
    }
}
