import CairnCatalog
import CairnCore
import CairnHashing
import CairnLibrary
import CairnNarration
import CairnPipeline
import CairnScanner
import Foundation

/// One `cairn import`: scan -> hash (reusing the cache) -> dedupe by content -> the lanes (transfer, metadata,
/// thumbnail, synthesis) -> snapshot and run record.
///
/// Each phase is its own method so `cairn sync` can put reconciliation between them.
public struct ImportRun: Sendable {
    public let library: Library
    public let options: ImportOptions
    public let narration: RunNarration
    public var hooks = ImportHooks()
    public var now: @Sendable () -> Date = { Date() }
    var narrator: Narrator { narration.narrator }
    /// Files kept without preview, appended from the lanes' threads.
    let keptWithoutPreview = KeptWithoutPreviewList()
    /// This run's blocking work, abandoned phases included.
    let work = WorkTracker()

    public init(library: Library, options: ImportOptions, output: any NarrationHandler = DiscardingNarrationHandler()) {
        self.init(library: library, options: options, narration: RunNarration(layout: library.layout, output: output))
    }

    /// An import narrated by a narration it shares with a larger run (`cairn sync`).
    init(library: Library, options: ImportOptions, narration: RunNarration) {
        self.library = library
        self.options = options
        self.narration = narration
    }

    public func run() async throws -> ImportSummary {
        let lock = try library.runLock()
        defer {
            // Abandoned (timed-out) phases finish before the lock goes: none may write after it.
            work.waitUntilIdle()
            withExtendedLifetime(lock) {}
        }
        let context = try begin(command: "import")
        do {
            let prepared = try prepare(context)
            var hashed = try await hash(prepared, context: context)
            try keepHashes(&hashed, context: context)
            narrator.phaseStarted(.reconciling)
            let plan = try classify(hashed)
            narrator.phaseEnded(.reconciling)
            let imported = try await importContent(plan, hashed: hashed, context: context)
            return try finish(context, hashed: hashed, imported: imported, plan: plan)
        } catch {
            fail(context, error)
            throw error
        }
    }

    // MARK: Phases

    struct Context: Sendable {
        var record: RunRecord
        var sourceRoot: String
        var sourceID: Int64
        var temporaryFilesRemoved: Int
        var clockStart: ContinuousClock.Instant
    }

    /// Opens the run: resolves the source, registers the run, clears what a killed run left in `tmp/`.
    func begin(command: String) throws -> Context {
        let started = now()
        narrator.runStarted(command: command)
        guard let sourceRoot = FileSystem.resolved(options.source) else {
            let message = ScanError.rootMissing(options.source).description
            narrator.runFailed(message)
            narration.close()
            throw WorkerError.sourceUnusable(message)
        }
        let sourceID = try library.catalog.sourceID(forRoot: sourceRoot, now: started)
        let record = RunRecord(id: narration.runID, command: command, sourceID: sourceID, startedAt: started)
        try library.catalog.startRun(record)
        let removed = library.removeLeftoverTemporaryFiles()
        return Context(record: record, sourceRoot: sourceRoot, sourceID: sourceID, temporaryFilesRemoved: removed,
                       clockStart: .now)
    }

    struct Prepared: Sendable {
        var report: ScanReport
        /// The last checksum of each file to hash that the snapshot knew (a sync keeps it for a file that then
        /// cannot be read). Only these: the whole snapshot is not held for the run.
        var previousChecksums: [String: Checksum]
        /// Paths of the last snapshot that the source no longer holds.
        var vanished: [String]
        /// Checksums reused from the cache, by index into `report.mediaFiles` (nil: to hash).
        var cached: [Checksum?]
        var toHash: [Int]
        /// The bytes of the files in `toHash`.
        var bytesToHash: Int64
    }

    /// Walks the source and diffs it against the last snapshot. After this, the work ahead is counted.
    func prepare(_ context: Context) throws -> Prepared {
        narrator.phaseStarted(.preparing, detail: context.sourceRoot)
        var excluded = Set<SourceScanner.DirectoryIdentity>()
        if let identity = SourceScanner.DirectoryIdentity(path: library.layout.root) { excluded.insert(identity) }
        let report: ScanReport
        do {
            report = try SourceScanner(root: context.sourceRoot, excludedDirectories: excluded).scan()
        } catch {
            throw WorkerError.sourceUnusable(error.description)
        }
        hooks.afterScan(report)
        let previous = try library.catalog.snapshot(sourceID: context.sourceID)
        var cached = [Checksum?](repeating: nil, count: report.mediaFiles.count)
        var toHash: [Int] = []
        var previousChecksums: [String: Checksum] = [:]
        for (index, file) in report.mediaFiles.enumerated() {
            let known = previous[file.relativePath]
            if let known, known.fingerprint == file.fingerprint, let checksum = known.checksum {
                cached[index] = checksum
            } else {
                toHash.append(index)
                if let checksum = known?.checksum { previousChecksums[file.relativePath] = checksum }
            }
        }
        // Snapshot entries still present number at least the cached files plus the changed ones it knew; only
        // when it holds more has something vanished, and only then is a set of every present path worth building.
        var vanished: [String] = []
        if previous.count > report.mediaFiles.count - toHash.count + previousChecksums.count {
            let present = Set(report.mediaFiles.map(\.relativePath))
            vanished = previous.keys.filter { !present.contains($0) }.sorted()
        }
        for issue in report.issues { narrator.warning("cannot read \(issue)") }
        if !report.symlinksSkipped.isEmpty {
            narrator.note("\(report.symlinksSkipped.count) symbolic links skipped (never followed)")
        }
        let bytesToHash = toHash.reduce(Int64(0)) { $0 + report.mediaFiles[$1].fingerprint.size }
        narrator.sourceScanned(
            filesSeen: report.mediaFiles.count, bytesSeen: report.mediaBytes, toHash: toHash.count,
            bytesToHash: bytesToHash,
            skipped: report.otherFiles + report.symlinksSkipped.count)
        narrator.phaseEnded(.preparing)
        return Prepared(report: report, previousChecksums: previousChecksums, vanished: vanished, cached: cached,
                        toHash: toHash, bytesToHash: bytesToHash)
    }

    struct Hashed: Sendable {
        var prepared: Prepared
        /// Every media file's checksum that is known now, by index into `report.mediaFiles`.
        var checksums: [Checksum?]
        /// New or changed files, hashed this run, for the snapshot.
        var snapshotUpserts: [SourceFileRecord]
        var failures: [ImportFailure]
        var hashedCount: Int
        var bytesHashed: Int64

        var report: ScanReport { prepared.report }

        /// Path -> checksum of every file whose content is known: the current source, for reconciliation.
        var currentSource: [String: Checksum] {
            var result: [String: Checksum] = [:]
            for (index, checksum) in checksums.enumerated() {
                if let checksum { result[prepared.report.mediaFiles[index].relativePath] = checksum }
            }
            return result
        }
    }

    /// Hashes new and changed files on every core; unchanged ones keep their cached checksum.
    func hash(_ prepared: Prepared, context: Context) async throws -> Hashed {
        narrator.phaseStarted(.hashing)
        let files = prepared.report.mediaFiles
        let requests = prepared.toHash.map { HashRequest(path: context.sourceRoot + "/" + files[$0].relativePath,
                                                         expected: files[$0].fingerprint) }
        let narrator = self.narrator
        let toHash = prepared.toHash
        let workers = options.hashWorkers
        // More to hash than half the memory: the copies would find little of it still cached, and keeping it would
        // push out everything else the machine had cached. Each file leaves the cache once hashed.
        let dropsCache = prepared.bytesToHash > System.physicalMemory / 2
        let results = try await BlockingWork.run {
            ParallelHasher.hash(requests, workers: workers, dropsCache: dropsCache) { slot, bytes in
                if bytes > 0 { narrator.hashed(file: files[toHash[slot]].relativePath, bytes: bytes) }
            }
        }
        // The cached checksums move into `checksums` (one array, not two), filled in below.
        var prepared = prepared
        let known = prepared.cached
        prepared.cached = []
        var hashed = Hashed(prepared: prepared, checksums: known, snapshotUpserts: [], failures: [],
                            hashedCount: 0, bytesHashed: 0)
        hashed.snapshotUpserts.reserveCapacity(prepared.toHash.count)
        for (slot, index) in prepared.toHash.enumerated() {
            let file = files[index]
            switch results[slot] {
            case .success(let result):
                hashed.checksums[index] = result.checksum
                hashed.hashedCount += 1
                hashed.bytesHashed += result.fingerprint.size
                let kind = MediaClassifier.kind(forHeader: result.header.bytes) ?? file.kind
                hashed.snapshotUpserts.append(SourceFileRecord(
                    relativePath: file.relativePath, fingerprint: result.fingerprint, checksum: result.checksum, kind: kind))
            case .failure(let error):
                let failure = ImportFailure(relativePath: file.relativePath, phase: .hashing,
                                            reason: error.failure, retryable: error.isTransient)
                hashed.failures.append(failure)
                narrator.failed(file: file.relativePath, reason: failure.reason, phase: .hashing)
            }
        }
        narrator.phaseEnded(.hashing)
        return hashed
    }

    struct ContentPlan: Sendable {
        /// Content the library lacks: (checksum, index of the first file holding it), in path order.
        var newContent: [(checksum: Checksum, index: Int)]
        var duplicates: Int
        var unchanged: Int
    }

    /// Sorts known content into new, duplicate and unchanged (inside the caller's reconciling phase).
    func classify(_ hashed: Hashed) throws -> ContentPlan {
        let inLibrary = try library.catalog.assetChecksums()
        let hashedThisRun = Set(hashed.prepared.toHash)
        var firstIndexOfNew: [Checksum: Int] = [:]
        var plan = ContentPlan(newContent: [], duplicates: 0, unchanged: 0)
        for index in hashed.report.mediaFiles.indices {
            guard let checksum = hashed.checksums[index] else { continue }
            if inLibrary.contains(checksum) {
                // Cached and already held: nothing to do. Freshly hashed but already held: a duplicate.
                if hashedThisRun.contains(index) { plan.duplicates += 1 } else { plan.unchanged += 1 }
            } else if firstIndexOfNew[checksum] == nil {
                firstIndexOfNew[checksum] = index
                plan.newContent.append((checksum, index))
            } else {
                plan.duplicates += 1
            }
        }
        let newBytes = plan.newContent.reduce(Int64(0)) { $0 + hashed.report.mediaFiles[$1.index].fingerprint.size }
        narrator.classified(new: plan.newContent.count, duplicates: plan.duplicates, newBytes: newBytes)
        return plan
    }

    struct Imported: Sendable {
        var bytesCopied: Int64
        var failures: [ImportFailure]
        /// Items that became ready this run (resumed ones of earlier runs included).
        var ready = 0
        /// Items whose original was put in place this run, derivatives left for later (`--derivatives off`).
        var archived = 0
        var completion: RunCompletion = .finished
        /// How many files ended each way.
        var outcomeCounts: [ImportFileOutcome.Outcome: Int] = [:]
        /// Every file's outcome, for `--report`; kept only when `ImportOptions.keepsOutcomes`.
        var outcomes: [ImportFileOutcome] = []
    }

    /// Brings new content (and whatever earlier runs left unfinished) through the transfer, metadata, thumbnail
    /// and synthesis lanes (`PipelineImport`): placeholders first, every transition persisted, so a killed run
    /// resumes where it stood. `options.cancellation` stops it (a signal).
    func importContent(_ plan: ContentPlan, hashed: Hashed, context: Context) async throws -> Imported {
        narrator.phaseStarted(.importing)
        let files = hashed.report.mediaFiles
        let newItems = plan.newContent.map { content in
            let file = files[content.index]
            return ImportItem(relativePath: file.relativePath, sourceRoot: context.sourceRoot, kind: file.kind,
                              byteCount: file.fingerprint.size, checksum: content.checksum)
        }
        var pipeline = PipelineImport(library: library, configuration: options.pipeline, sourceID: context.sourceID)
        pipeline.runID = context.record.id
        let narration = PipelineNarration(narrator: narrator, configuration: options.pipeline)
        pipeline.onCopied = narration.copied
        pipeline.work = work
        let narrator = self.narrator
        let kept = keptWithoutPreview
        pipeline.onKeptWithoutPreview = { path, reason in
            if kept.append(ImportFailure(relativePath: path, phase: .thumbnail, reason: reason, retryable: false)) {
                narrator.keptWithoutPreview(file: path, reason: reason)
            }
        }
        pipeline.onDamaged = { original, quarantined in
            narrator.warning("\(original) was damaged (its bytes no longer match its SHA1): kept at \(quarantined), copied anew from the source")
        }
        let result = try await pipeline.run(newItems: newItems, onEvent: narration.handle,
                                            cancellation: options.cancellation)
        // Pairing looks at every unpaired asset: only worth it when this run brought something in.
        if result.completion != .interrupted, result.report.count(.imported) > 0 {
            let pairs = try LivePhotoPairing.pair(catalog: library.catalog, now: now())
            if !pairs.isEmpty { narrator.note("paired \(pairs.count) Live Photo\(pairs.count == 1 ? "" : "s") (a still and its movie, one unit)") }
        }
        // Only a source with sidecars pays for the path-to-checksum map they are matched through.
        if result.completion != .interrupted, !hashed.report.sidecarFiles.isEmpty {
            let sidecars = SidecarLinker(library: library, now: now()).link(
                hashed.report.sidecarFiles, sourceRoot: context.sourceRoot, checksums: hashed.currentSource)
            if sidecars.linked > 0 { narrator.note("\(sidecars.linked) sidecar\(sidecars.linked == 1 ? "" : "s") stored with their media") }
            for failure in sidecars.failures {
                narrator.warning("sidecar \(failure.relativePath) not stored (next run tries again): \(failure.reason)")
            }
        }
        switch result.completion {
        case .interrupted: narrator.warning("interrupted: \(result.report.count(.unfinished)) items resume next run")
        case .stoppedAtErrorLimit:
            narrator.warning("stopped after \(options.pipeline.maxErrors ?? 0) failures (--max-errors); "
                             + "\(result.report.count(.unfinished)) items resume next run")
        case .finished, .finishedWithFailures: break
        }

        var imported = Imported(bytesCopied: narration.bytesCopied, failures: [],
                                ready: result.report.count(.imported), archived: result.report.count(.archived),
                                completion: result.completion)
        if imported.archived > 0 {
            narrator.note("\(imported.archived) original\(imported.archived == 1 ? "" : "s") archived without derivatives "
                          + "(--derivatives off): a run without it makes their thumbnails, previews and clips")
        }
        for entry in result.report.entries {
            if case .failed(let lane, let reason) = entry.outcome {
                imported.failures.append(ImportFailure(
                    relativePath: entry.path, phase: FailurePhase(lane),
                    reason: reason, retryable: false))
            }
        }
        let keepsOutcomes = options.keepsOutcomes
        ImportFileOutcome.forEach(hashed: hashed, pipeline: result.report) { outcome in
            imported.outcomeCounts[outcome.outcome, default: 0] += 1
            if keepsOutcomes { imported.outcomes.append(outcome) }
        }
        narrator.phaseEnded(.importing)
        return imported
    }

    /// Saves this run's new checksums to the snapshot as soon as hashing ends, so a run killed while importing
    /// does not hash the whole source again. (The snapshot is the checksum cache; what reconciliation trusts
    /// is its own healthy snapshot, which only a finished sync advances.)
    /// The rows are not kept in memory afterwards.
    func keepHashes(_ hashed: inout Hashed, context: Context) throws {
        try library.catalog.updateSnapshot(sourceID: context.sourceID, upserting: hashed.snapshotUpserts, removing: [])
        hashed.snapshotUpserts = []
    }
}
