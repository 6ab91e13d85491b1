import CairnCatalog
import CairnCore
import CairnHashing
import CairnNarration
import CairnScanner
import Foundation

/// What a person asked an import to do.
public struct ImportOptions: Sendable {
    public var source: String
    public var hashWorkers = System.coreCount
    /// Copies are I/O bound: a few more than cores keeps a disk queue busy.
    public var copyWorkers = 4

    public init(source: String) { self.source = source }
}

/// A file that could not be imported, and why.
public struct ImportFailure: Sendable, Equatable, Codable {
    public var relativePath: String
    public var phase: String
    public var reason: String
    public var retryable: Bool
}

/// What an import did.
public struct ImportSummary: Sendable {
    public var runID: String
    public var sourceRoot: String
    public var counts: ImportCounts
    public var failures: [ImportFailure]
    public var symlinksSkipped: [String]
    public var otherFiles: Int
    public var junkSkipped: Int
    public var scanIssues: [ScanIssue]
    public var temporaryFilesRemoved: Int
    public var elapsedSeconds: Double

    public var exitStatus: ExitStatus { failures.isEmpty && scanIssues.isEmpty ? .success : .someFilesFailed }
}

/// How far an import has got, for whoever narrates it.
public enum ImportProgress: Sendable {
    case scanned(files: Int, bytesToHash: Int64, filesToHash: Int)
    case hashed(bytes: Int64)
    case hashingFinished
    case copyStarted(files: Int, bytes: Int64)
    case copied(relativePath: String, bytes: Int64)
    case failed(ImportFailure)
}

/// One `cairn import`: scan -> hash (reusing the cache) -> dedupe by content -> copy new content -> catalog.
public struct ImportRun: Sendable {
    public let library: Library
    public let options: ImportOptions
    public var progress: @Sendable (ImportProgress) -> Void = { _ in }
    public var now: @Sendable () -> Date = { Date() }

    public init(library: Library, options: ImportOptions) {
        self.library = library
        self.options = options
    }

    public func run() throws -> ImportSummary {
        let started = now()
        let clockStart = ContinuousClock.now
        let temporaryFilesRemoved = library.removeLeftoverTemporaryFiles()
        guard let sourceRoot = FileSystem.resolved(options.source) else {
            throw WorkerError.sourceUnusable(ScanError.rootMissing(options.source).description)
        }
        let catalog = library.catalog
        let sourceID = try catalog.sourceID(forRoot: sourceRoot, now: started)
        var run = RunRecord(id: RunID.make(at: started), command: "import", sourceID: sourceID, startedAt: started)
        try catalog.startRun(run)

        // 1. Walk the source; the library itself is never walked, even when it sits inside the source.
        var excluded = Set<SourceScanner.DirectoryIdentity>()
        if let library = SourceScanner.DirectoryIdentity(path: library.layout.root) { excluded.insert(library) }
        let report: ScanReport
        do {
            report = try SourceScanner(root: sourceRoot, excludedDirectories: excluded).scan()
        } catch {
            run.endedAt = now()
            run.outcome = "failed"
            run.message = error.description
            try catalog.finishRun(run, failures: [])
            throw WorkerError.sourceUnusable(error.description)
        }

        // 2. Diff against the last snapshot: unchanged files keep their cached checksum.
        let previous = try catalog.snapshot(sourceID: sourceID)
        var known: [Int: Checksum] = [:]
        var toHash: [Int] = []
        for (index, file) in report.mediaFiles.enumerated() {
            if let cached = previous[file.relativePath], cached.fingerprint == file.fingerprint, let checksum = cached.checksum {
                known[index] = checksum
            } else {
                toHash.append(index)
            }
        }
        let bytesToHash = toHash.reduce(Int64(0)) { $0 + report.mediaFiles[$1].fingerprint.size }
        progress(.scanned(files: report.mediaFiles.count, bytesToHash: bytesToHash, filesToHash: toHash.count))

        // 3. Hash new and changed files in parallel.
        var failures: [ImportFailure] = []
        var snapshotUpserts: [SourceFileRecord] = []
        let requests = toHash.map { HashRequest(path: sourceRoot + "/" + report.mediaFiles[$0].relativePath,
                                                expected: report.mediaFiles[$0].fingerprint) }
        let progress = self.progress
        let hashed = ParallelHasher.hash(requests, workers: options.hashWorkers) { bytes in progress(.hashed(bytes: bytes)) }
        progress(.hashingFinished)
        var bytesHashed: Int64 = 0
        for (slot, index) in toHash.enumerated() {
            let file = report.mediaFiles[index]
            switch hashed[slot] {
            case .success(let result):
                known[index] = result.checksum
                bytesHashed += result.fingerprint.size
                var kind = file.kind
                if let sniffed = MediaClassifier.kind(forHeader: result.header) { kind = sniffed }
                snapshotUpserts.append(SourceFileRecord(
                    relativePath: file.relativePath, fingerprint: result.fingerprint, checksum: result.checksum, kind: kind))
            case .failure(let error):
                let failure = ImportFailure(relativePath: file.relativePath, phase: "hashing",
                                          reason: Self.reason(error, root: sourceRoot), retryable: error.isTransient)
                failures.append(failure)
                progress(.failed(failure))
            }
        }

        // 4. Dedupe by content: the first path (in sorted order) of each new checksum is copied.
        let inLibrary = try catalog.assetChecksums()
        var firstIndexOfNew: [Checksum: Int] = [:]
        let hashedThisRun = Set(toHash)
        var duplicates = 0
        var unchanged = 0
        for index in report.mediaFiles.indices {
            guard let checksum = known[index] else { continue }
            if inLibrary.contains(checksum) {
                // Cached and already held: nothing to do. Freshly hashed but already held: a duplicate.
                if hashedThisRun.contains(index) { duplicates += 1 } else { unchanged += 1 }
            } else if firstIndexOfNew[checksum] == nil {
                firstIndexOfNew[checksum] = index
            } else {
                duplicates += 1
            }
        }

        // 5. Copy new content into the originals store, verified by the hash taken during the copy.
        let toCopy = firstIndexOfNew.sorted { $0.value < $1.value }
        progress(.copyStarted(files: toCopy.count, bytes: toCopy.reduce(0) { $0 + report.mediaFiles[$1.value].fingerprint.size }))
        let store = OriginalsStore(layout: library.layout)
        let layout = library.layout
        let copyResults = parallelMap(
            count: toCopy.count, workers: options.copyWorkers,
            makeState: { try? FileHasher() },
            body: { hasher, slot -> Result<(AssetRecord, Int64), HashingError> in
                let (checksum, index) = toCopy[slot]
                let file = report.mediaFiles[index]
                let fileExtension = MediaClassifier.fileExtension(of: file.relativePath.split(separator: "/").last ?? "").lowercased()
                let relativePath = layout.originalRelativePath(checksum, fileExtension: fileExtension)
                guard let hasher else {
                    return .failure(.notRegularFile(path: file.relativePath))
                }
                let result = Result { () throws(HashingError) in
                    try store.place(sourcePath: sourceRoot + "/" + file.relativePath, checksum: checksum,
                                    relativePath: relativePath, hasher: hasher)
                }
                return result.map { placement in
                    let copied: Int64
                    if case .copied(let bytes) = placement { copied = bytes } else { copied = 0 }
                    progress(.copied(relativePath: file.relativePath, bytes: copied))
                    let asset = AssetRecord(
                        checksum: checksum, kind: file.kind, size: file.fingerprint.size, originalExtension: fileExtension,
                        firstSourcePath: file.relativePath, originalPath: relativePath, importedAt: Date(), runID: nil)
                    return (asset, copied)
                }
            })
        var newAssets: [AssetRecord] = []
        var bytesCopied: Int64 = 0
        for (slot, result) in copyResults.enumerated() {
            switch result {
            case .success(let (unsaved, copied)):
                var asset = unsaved
                asset.runID = run.id
                newAssets.append(asset)
                bytesCopied += copied
            case .failure(let error):
                let path = report.mediaFiles[toCopy[slot].value].relativePath
                let failure = ImportFailure(relativePath: path, phase: "transfer",
                                          reason: Self.reason(error, root: sourceRoot), retryable: error.isTransient)
                failures.append(failure)
                progress(.failed(failure))
                // Not cached, so the next run reads it again.
                snapshotUpserts.removeAll { $0.relativePath == path }
            }
        }

        // 6. Catalog: assets (their bytes are durable), then the snapshot, then the run.
        try catalog.insertAssets(newAssets)
        let present = Set(report.mediaFiles.map(\.relativePath))
        let removed = previous.keys.filter { !present.contains($0) }
        try catalog.updateSnapshot(sourceID: sourceID, upserting: snapshotUpserts, removing: removed.sorted())

        var counts = ImportCounts()
        counts.filesSeen = report.mediaFiles.count
        counts.filesHashed = toHash.count - failures.filter { $0.phase == "hashing" }.count
        counts.bytesHashed = bytesHashed
        counts.imported = newAssets.count
        counts.duplicates = duplicates
        counts.unchanged = unchanged
        counts.skipped = report.otherFiles + report.symlinksSkipped.count
        counts.failed = failures.count
        counts.bytesCopied = bytesCopied
        run.counts = counts
        run.endedAt = now()
        run.outcome = failures.isEmpty && report.isComplete ? "success" : "someFailed"
        let runID = run.id
        var failureRecords = failures.map { RunFailureRecord(runID: runID, relativePath: $0.relativePath, phase: $0.phase, reason: $0.reason) }
        failureRecords += report.issues.map { RunFailureRecord(runID: runID, relativePath: $0.relativePath, phase: "scanning", reason: $0.reason) }
        try catalog.finishRun(run, failures: failureRecords)

        return ImportSummary(
            runID: runID, sourceRoot: sourceRoot, counts: counts, failures: failures.sorted { $0.relativePath < $1.relativePath },
            symlinksSkipped: report.symlinksSkipped, otherFiles: report.otherFiles, junkSkipped: report.junkSkipped,
            scanIssues: report.issues, temporaryFilesRemoved: temporaryFilesRemoved,
            elapsedSeconds: (ContinuousClock.now - clockStart).seconds)
    }

    /// A failure's reason with the absolute source prefix taken off, since the report names the file already.
    static func reason(_ error: HashingError, root: String) -> String {
        error.description.replacingOccurrences(of: root + "/", with: "")
    }
}
