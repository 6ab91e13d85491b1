import CairnCatalog
import CairnCore
import CairnReconcile
import CairnStore
import Foundation

/// The trash of a library whose files are in an object store: a state, not a move. A store has no rename, and a
/// copy then a delete per file would cost two requests and the bytes twice; so trashing journals the asset's files,
/// then moves its record to the catalog's trash (`markTrashed`) and leaves every object where it is. A restore
/// journals, checks the objects are still there and brings the record back; only `purge` deletes objects, those of
/// runs trashed long enough ago whose assets were not imported again meanwhile. The journal stays the authority:
/// every action is written there before it is carried out. Callers hold the library's lock.
public struct StoreTrash: Sendable {
    public let journal: DeletionJournal
    public let catalog: any DeletionCatalog
    public let store: any ObjectStore

    public init(libraryRoot: String, catalog: any DeletionCatalog, store: any ObjectStore) {
        journal = DeletionJournal(libraryRoot: libraryRoot)
        self.catalog = catalog
        self.store = store
    }

    /// Trashes each candidate (a Live Photo whole): journaled, then out of the catalog's listing. A candidate
    /// whose original is not in the store is a failure, and stays.
    public func trash(_ candidates: [DeleteCandidate], runID: String, sourcePaths: [Checksum: String] = [:],
                      now: Date) async throws -> DeletionRun.Summary {
        var summary = DeletionRun.Summary()
        guard !candidates.isEmpty else { return summary }
        try LibraryPaths.validateRunID(runID)
        for candidate in try await DeletionRun.withMotionParts(candidates, catalog: catalog) {
            let checksum = candidate.checksum
            guard let asset = try await catalog.asset(checksum) else {
                summary.failures.append(DeletionFailure(checksum: checksum, path: checksum.hex,
                                                        reason: "not in the library's catalog; nothing to trash"))
                continue
            }
            guard try await exists(asset.originalPath) else {
                summary.failures.append(DeletionFailure(checksum: checksum, path: asset.originalPath,
                                                        reason: FailureReason("not in \(store.description)")))
                continue
            }
            // A preview that is the original names it twice.
            var paths = [asset.originalPath]
            for path in try await catalog.derivedFiles(of: checksum).map(\.path) + catalog.sidecars(of: checksum).map(\.path)
            where !paths.contains(path) {
                paths.append(path)
            }
            let item = TrashItem(checksum: checksum, libraryPaths: paths, sourcePath: sourcePaths[checksum] ?? asset.firstSourcePath)
            try journal.append(JournalEntry(runID: runID, action: .trash, checksum: checksum, paths: paths,
                                            sourcePath: item.sourcePath, timestamp: now))
            try await catalog.markTrashed([(checksum, paths)], runID: runID, at: now)
            summary.trashed.append(item)
        }
        try await catalog.removePending(summary.trashed.map(\.checksum))
        return summary
    }

    /// Brings a run's trashed assets back (all, those of `checksums`, or those whose file names match `pattern`):
    /// each whose objects are all still in the store is journaled and reported restored; an asset already back
    /// (restored before, or imported again) is reported present. The caller puts the records back.
    public func restore(runID: String, checksums: Set<Checksum>? = nil, fileNameMatching pattern: String? = nil,
                        now: Date) async throws -> RestoreReport {
        try LibraryPaths.validateRunID(runID)
        let entries = try journal.entries(runID: runID)
        let purged = entries.contains { $0.action == .purge }
        var report = RestoreReport()
        for entry in try TrashMover.chosen(entries, checksums: checksums, fileNameMatching: pattern) {
            guard let checksum = entry.checksum else { continue }
            if try await catalog.asset(checksum) != nil {
                report.alreadyPresent += entry.paths
                continue
            }
            var missing: [String] = []
            for path in entry.paths where try await !exists(path) { missing.append(path) }
            guard missing.isEmpty else {
                let why = purged ? "purged from \(store.description)" : "not in \(store.description)"
                report.failures += missing.map { DeletionFailure(checksum: checksum, path: $0, reason: FailureReason(why)) }
                continue
            }
            try journal.append(JournalEntry(runID: runID, action: .restore, checksum: checksum, paths: entry.paths,
                                            sourcePath: entry.sourcePath, timestamp: now))
            report.restored.append(TrashItem(checksum: checksum, libraryPaths: entry.paths, sourcePath: entry.sourcePath))
        }
        return report
    }

    /// Deletes for good the objects of every run whose last trashing is at least `age` seconds before `now`, and
    /// not purged before: each run's purge journaled first, with the paths it deletes. An asset restored, or
    /// imported again since (its record is back in the catalog), keeps its objects.
    public func purge(olderThan age: TimeInterval, now: Date) async throws -> PurgeReport {
        var report = PurgeReport()
        var lastTrashed: [String: Date] = [:]
        var purged: Set<String> = []
        // Per run, the assets trashed and not restored since, in the journal's order.
        var waiting: [String: [Checksum: [String]]] = [:]
        for entry in try journal.entries() {
            switch entry.action {
            case .trash:
                lastTrashed[entry.runID] = max(lastTrashed[entry.runID] ?? entry.timestamp, entry.timestamp)
                if let checksum = entry.checksum { waiting[entry.runID, default: [:]][checksum] = entry.paths }
            case .restore:
                if let checksum = entry.checksum { waiting[entry.runID]?[checksum] = nil }
            case .purge:
                purged.insert(entry.runID)
            }
        }
        for (runID, trashedAt) in lastTrashed.sorted(by: { $0.key < $1.key }) where !purged.contains(runID) {
            guard now.timeIntervalSince(trashedAt) >= age else {
                report.keptRuns.append(runID)
                continue
            }
            var paths: [String] = []
            for (checksum, files) in (waiting[runID] ?? [:]).sorted(by: { $0.key.hex < $1.key.hex })
            where try await catalog.asset(checksum) == nil {
                paths += files
            }
            try journal.append(JournalEntry(runID: runID, action: .purge, checksum: nil, paths: paths, timestamp: now))
            for path in paths {
                do {
                    try await store.delete(try ObjectKey(path))
                    report.purgedFileCount += 1
                } catch {
                    report.skipped.append(DeletionFailure(checksum: nil, path: path, reason: FailureReason(error.description)))
                }
            }
            report.purgedRuns.append(runID)
        }
        return report
    }

    private func exists(_ path: String) async throws -> Bool {
        try await store.size(of: try ObjectKey(path)) != nil
    }
}
