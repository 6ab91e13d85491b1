import CairnArchive
import CairnCatalog
import CairnCore
import CairnHashing
import CairnLibrary
import CairnNarration
import CairnPipeline
import CairnScanner
import CairnStages
import Foundation

/// One `cairn import`: scan -> hash (reusing the cache) -> dedupe by content -> the lanes (transfer, metadata,
/// thumbnail, synthesis) -> snapshot and run record.
///
/// Each phase is its own method so `cairn sync` can put reconciliation between them.
///
/// The catalog is reached through its interfaces (`ImportCatalog`), each call off the caller's thread.
public struct ImportRun: Sendable {
    public let library: Library
    /// Where the run keeps its items, snapshot, record and run tables: the library's SQLite catalog or PostgreSQL's
    /// (`CairnPostgresCatalog`).
    package let catalog: any ImportCatalog
    public let options: ImportOptions
    public let narration: RunNarration
    public var hooks = ImportHooks()
    public var now: @Sendable () -> Date = { Date() }
    var pageSizes = PageSizes()
    var narrator: Narrator { narration.narrator }
    /// Files kept without preview, appended from the lanes' threads.
    let keptWithoutPreview = KeptWithoutPreviewList()
    /// This run's blocking work, abandoned phases included.
    package let work = WorkTracker()

    public init(library: Library, catalog: any ImportCatalog, options: ImportOptions,
                output: any NarrationHandler = DiscardingNarrationHandler()) {
        self.init(library: library, catalog: catalog, options: options,
                  narration: RunNarration(layout: library.layout, output: output))
    }

    /// An import narrated by a narration it shares with a larger run (`cairn sync`), its records in `catalog`.
    package init(library: Library, catalog: any ImportCatalog, options: ImportOptions, narration: RunNarration) {
        self.library = library
        self.catalog = catalog
        self.options = options
        self.narration = narration
    }

    /// The run; cancelling the calling task stops it as SIGINT does (`PipelineCancellation.stoppingOnCancel`).
    public func run() async throws -> ImportSummary {
        // The budget counts a phase's memory as given back when its work returns: under a limit, freed frames and
        // encoder buffers must leave the process, not stay in glibc's heap for the next phase's peak to add to.
        if options.pipeline.memory?.isLimit == true { MemoryTuning.returnLargeBlocksToTheSystem() }
        return try await options.cancellation.stoppingOnCancel {
            // Abandoned (timed-out) phases finish before the lock goes: none may write after it.
            try await library.whileLocked { try await work.settling { try await runLocked() } }
        }
    }

    private func runLocked() async throws -> ImportSummary {
        let context = try await begin(command: "import")
        do {
            return try await catalog.withRunTables(sourceID: context.sourceID) { files in
                let prepared = try await prepare(context, into: files)
                let hashed = try await hash(prepared, context: context)
                narrator.phaseStarted(.reconciling)
                let plan = try await classify(hashed)
                narrator.phaseEnded(.reconciling)
                let imported = try await importContent(plan, hashed: hashed, context: context)
                return try await finish(context, hashed: hashed, imported: imported, plan: plan)
            }
        } catch {
            await fail(context, error)
            throw error
        }
    }

    // MARK: Phases

    package struct Context: Sendable {
        package var record: RunRecord
        package var sourceRoot: String
        package var sourceID: Int64
        package var temporaryFilesRemoved: Int
        package var clockStart: ContinuousClock.Instant
        /// Armed for this run and held for its length (nil for a dry run, which decodes nothing).
        package var crashEvidence: CrashEvidence? = nil

        package init(record: RunRecord, sourceRoot: String, sourceID: Int64, temporaryFilesRemoved: Int,
                     clockStart: ContinuousClock.Instant, crashEvidence: CrashEvidence? = nil) {
            self.record = record
            self.sourceRoot = sourceRoot
            self.sourceID = sourceID
            self.temporaryFilesRemoved = temporaryFilesRemoved
            self.clockStart = clockStart
            self.crashEvidence = crashEvidence
        }
    }

    /// Opens the run: resolves the source, registers the run, clears what a killed run left in `tmp/`.
    package func begin(command: String) async throws -> Context {
        let started = now()
        narrator.runStarted(command: command)
        guard let sourceRoot = FileSystem.resolved(options.source) else {
            let message = ScanError.rootMissing(options.source).description
            narrator.runEnded(.failed, message: message)
            narration.close()
            throw WorkerError.sourceUnusable(message)
        }
        let sourceID = try await catalog.sourceID(forRoot: sourceRoot)
        let record = RunRecord(id: narration.runID, command: command, sourceID: sourceID, startedAt: started)
        try await catalog.startRun(record)
        // A queue's workers may be writing into `tmp/` now: only what no one touched for a day is a leftover.
        let removed = library.removeLeftoverTemporaryFiles(
            untouchedSince: options.destination.sharesTemporaryFolder ? started.addingTimeInterval(-86_400) : nil)
        let evidence = try await recoverItemsInFlight()
        return Context(record: record, sourceRoot: sourceRoot, sourceID: sourceID, temporaryFilesRemoved: removed,
                       clockStart: .now, crashEvidence: evidence)
    }

    /// Weighs the items a worker that died left in flight (`CrashLoopGuard`), before any work and in one transaction,
    /// then arms the crash evidence for this run. Evidence is cleared only once the recovery is saved: a start-up
    /// interrupted before that recovers the same death again, and counts it once.
    func recoverItemsInFlight() async throws -> CrashEvidence {
        let evidence = try CrashEvidence(layout: library.layout)
        let fault = try evidence.recorded()
        let inFlight = try await catalog.importItemsInFlight()
        if !inFlight.isEmpty {
            let (_, changed) = CrashLoopGuard.recover(inFlight, after: fault == nil ? .killed : .crashed)
            try await catalog.saveImportItemStates(changed, with: StageRows())
            if let fault {
                narrator.warning("the previous run crashed (\(fault)) with \(inFlight.count) item\(inFlight.count == 1 ? "" : "s") "
                                 + "in flight: they run one at a time, last, so the file that crashed it is found")
            }
        }
        try evidence.clearAndArm()
        return evidence
    }

    package struct Prepared: Sendable {
        package var report: ScanReport
        /// The walk's files, in the catalog's run tables rather than in memory, with the cached checksums.
        package var files: any RunTables
        package var match: SnapshotMatch
        /// Paths of the last snapshot that the source no longer holds.
        package var vanished: [String]
    }

    /// How many files a walk hands to the run tables at a time, how many the hashing reads per round, and how
    /// many items the lanes take on at a time: what the run holds in memory, whatever the source's size.
    package struct PageSizes: Sendable {
        package var walk = 4096
        package var hash = 2048
        package var `import` = 2048
    }

    /// Walks the source into the run tables, matching each file against the last snapshot as it goes in. After
    /// this, the work ahead is counted. The walk runs on the blocking pool and stops when the run is stopped.
    package func prepare(_ context: Context, into files: any RunTables) async throws -> Prepared {
        narrator.phaseStarted(.preparing, detail: context.sourceRoot)
        // The inserts the walk queued end before anything reads the tables, or the run gives up on them.
        let appender = RunTablesAppender(files)
        let report: ScanReport
        do {
            report = try await BlockingWork.run { [self] in try walk(context, into: appender) }
        } catch {
            try? await appender.finish()
            throw error
        }
        try await appender.finish()
        hooks.afterScan(report)
        let match = try await files.matchSnapshot()
        // Only when the snapshot holds paths the walk did not find is the list of them worth a query.
        let vanished = match.vanished > 0 ? try await files.vanishedPaths() : []
        for issue in report.issues { narrator.warning("cannot read \(issue)") }
        for entry in report.refusedEntries { narrator.warning("skipped \(entry)") }
        for archive in report.settlingArchives { narrator.warning("skipped \(archive)") }
        if report.archivesListed + report.archivesUnchanged > 0 {
            narrator.note("archives: \(report.archivesListed) read, \(report.archivesUnchanged) unchanged since the last walk")
        }
        if !report.symlinksSkipped.isEmpty {
            narrator.note("\(report.symlinksSkipped.count) symbolic links skipped (never followed)")
        }
        narrator.sourceScanned(
            filesSeen: match.files, bytesSeen: match.bytes, toHash: match.toHash, bytesToHash: match.bytesToHash,
            skipped: report.otherFiles + report.symlinksSkipped.count)
        narrator.phaseEnded(.preparing)
        return Prepared(report: report, files: files, match: match, vanished: vanished)
    }

    /// The walk, on a blocking thread, its batches going into the run tables as it goes.
    private func walk(_ context: Context, into appender: RunTablesAppender) throws -> ScanReport {
        var excluded = Set<SourceScanner.DirectoryIdentity>()
        if let identity = SourceScanner.DirectoryIdentity(path: library.layout.root) { excluded.insert(identity) }
        let report: ScanReport
        do {
            let interrupt = options.cancellation.interrupt
            var scanner = SourceScanner(root: context.sourceRoot, excludedDirectories: excluded, interrupt: interrupt,
                                        archives: options.archives)
            scanner.savedListings = SavedListings(folder: library.layout.archiveListingsDirectory)
            report = try scanner.scan(
                batchSize: pageSizes.walk, media: { try appender.append($0) },
                sidecars: { try appender.appendSidecars($0) })
        } catch .interrupted {
            throw WorkerError.interrupted("interrupted during the walk: nothing was imported; the next run walks the source again")
        } catch {
            throw WorkerError.sourceUnusable(error.description)
        }
        // Listings of archives no walk has read for a month (gone, or in a source no longer imported).
        if options.archives == .read {
            SavedListings(folder: library.layout.archiveListingsDirectory).removeUnused(since: now().addingTimeInterval(-30 * 86_400))
        }
        return report
    }

    package struct Hashed: Sendable {
        package var prepared: Prepared
        package var failures: [ImportFailure]
        package var hashedCount: Int
        package var bytesHashed: Int64
        /// Files left unread because the run was stopping: read next run.
        package var notHashed = 0

        package var report: ScanReport { prepared.report }
        package var files: any RunTables { prepared.files }
    }

    /// Hashes new and changed files on every core, a page at a time; unchanged ones keep their cached checksum.
    /// With `keepsHashes`, each page's checksums go into the snapshot as the page ends, so a run killed later
    /// does not hash them again. (The snapshot is the checksum cache; what reconciliation trusts is its own
    /// healthy snapshot, which only a finished sync advances.)
    package func hash(_ prepared: Prepared, context: Context, keepsHashes: Bool = true) async throws -> Hashed {
        narrator.phaseStarted(.hashing)
        var hashed = Hashed(prepared: prepared, failures: [], hashedCount: 0, bytesHashed: 0)
        let narrator = self.narrator
        let requestedWorkers = options.hashWorkers
        // More to hash than half the memory: the copies would find little of it still cached, and keeping it would
        // push out everything else the machine had cached. Each file leaves the cache once hashed.
        let dropsCache = prepared.match.bytesToHash > System.physicalMemory / 2
        let root = context.sourceRoot
        var after: Int64 = 0
        // With nothing to hash (a rescan), not even one look through the run's files for some.
        while prepared.match.toHash > 0 {
            let page = try await prepared.files.filesToHash(after: after, limit: pageSizes.hash, byteLimit: 1 << 30)
            guard let last = page.last else { break }
            after = last.id
            let requests = page.map { HashRequest(path: root + "/" + $0.record.relativePath, expected: $0.record.fingerprint) }
            let workers = Self.hashWorkers(requested: requestedWorkers, cores: System.coreCount, files: page.count,
                                           bytes: page.reduce(0) { $0 + $1.record.fingerprint.size })
            let interrupt = options.cancellation.interrupt
            let results = try await BlockingWork.run {
                ParallelHasher.hash(requests, workers: workers, dropsCache: dropsCache, interrupt: interrupt) { slot, bytes in
                    if bytes > 0 { narrator.hashed(file: page[slot].record.relativePath, bytes: bytes) }
                }
            }
            var done: [RunFile] = []
            var failed: [Int64: FailureReason] = [:]
            done.reserveCapacity(page.count)
            for (slot, file) in page.enumerated() {
                switch results[slot] {
                case .success(let result):
                    var file = file
                    file.record.checksum = result.checksum
                    file.record.fingerprint = result.fingerprint
                    file.record.kind = MediaClassifier.kind(forHeader: result.header.bytes) ?? file.record.kind
                    hashed.hashedCount += 1
                    hashed.bytesHashed += result.fingerprint.size
                    done.append(file)
                case .failure(.interrupted):
                    break  // not a failure: counted below with the files never started
                case .failure(let error):
                    let failure = ImportFailure(relativePath: file.record.relativePath, phase: .hashing,
                                                reason: error.failure, retryable: error.isTransient)
                    hashed.failures.append(failure)
                    failed[file.id] = failure.reason
                    narrator.failed(file: failure.relativePath, reason: failure.reason, phase: .hashing)
                }
            }
            try await prepared.files.recordHashes(done, failed: failed, updatingSnapshot: keepsHashes)
            if interrupt.isInterrupted {
                hashed.notHashed = prepared.match.toHash - hashed.hashedCount - hashed.failures.count
                narrator.warning("interrupted: \(hashed.notHashed) file\(hashed.notHashed == 1 ? "" : "s") not hashed; the next run reads them")
                break
            }
        }
        narrator.phaseEnded(.hashing)
        return hashed
    }

    /// Threads hashing a page: the number asked for, else one per core, or four per core (at most 16) when the
    /// page's files average at most `smallFileBytes`. Hashing a small file is mostly waiting for its read, and in a
    /// cold folder each read is a trip to the disk: more of them in flight keep the disk busy (10,000 small JPEGs
    /// read cold, `--hash-threads 2` hashed in 0.57 to 0.62 s, 8 in 0.35 to 0.39 s). Big files are hashed at the
    /// CPU's speed, where threads beyond the cores only take turns.
    static func hashWorkers(requested: Int?, cores: Int, files: Int, bytes: Int64) -> Int {
        if let requested { return max(1, requested) }
        let cores = max(1, cores)
        guard files > 0, bytes / Int64(files) <= smallFileBytes else { return cores }
        return min(4 * cores, 16)
    }

    /// The largest average file size for which a page is hashed by more threads than cores.
    static let smallFileBytes: Int64 = 1 << 20

    package typealias ContentPlan = ContentCounts

    /// Sorts known content into new, duplicate and unchanged (inside the caller's reconciling phase).
    package func classify(_ hashed: Hashed) async throws -> ContentPlan {
        let plan = try await hashed.files.classify()
        narrator.classified(new: plan.newContent, duplicates: plan.duplicates, newBytes: plan.newBytes)
        return plan
    }

    package struct Imported: Sendable {
        package var bytesCopied: Int64
        package var failures: [ImportFailure]
        /// Items that became ready this run (resumed ones of earlier runs included).
        package var ready = 0
        /// Items whose original was put in place this run, derivatives left for later (`--derivatives off`).
        package var archived = 0
        package var completion: RunOutcome = .success
        /// How many files ended each way.
        package var outcomeCounts: [FileOutcome.Kind: Int] = [:]
        /// Every file's outcome, for `--report`; kept only when `ImportOptions.keepsOutcomes`.
        package var outcomes: [FileOutcomeEntry] = []
        /// New content held back this run (`ImportFilter`), by source path.
        package var heldBack: [String: Hold] = [:]
    }
}

/// What a run (an import, a sync) asks of its catalog: items, snapshots, run records, run tables, what links to
/// assets, the reconciliation stores, and the trash's records (a sync's deletions).
public typealias ImportCatalog = ItemCatalog & SnapshotCatalog & RunCatalog & RunTablesCatalog & AssetLinkCatalog
    & ReconcileCatalog & TrashCatalog & DriftCatalog

/// Everything a command may ask of a library's catalog: a run's needs, and the read side's.
public typealias LibraryCatalog = ImportCatalog & BrowseCatalog & StoredFileCatalog
