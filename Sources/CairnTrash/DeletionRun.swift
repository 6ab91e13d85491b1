import CairnCatalog
import CairnCore
import CairnLibrary
import CairnReconcile
import Foundation

/// Carries out a plan's deletions: for each candidate, its original (from the catalog) and derived
/// files (whatever exists under `derived/ab/<sha1>-*`) are journaled, then moved into
/// `trash/<run-id>/`, then the asset leaves the catalog's listing (kept in `trashed_asset` for restore).
///
/// The caller holds the `LibraryLock` and passes only `plan.deleteCandidates` (the rails and the cap
/// have already spoken). A crash between the move and the catalog update is repaired by the next
/// run: a candidate whose files already sit in an earlier run's trash is just marked trashed.
public struct DeletionRun: Sendable {
    public let library: Library
    /// The library's catalog: its SQLite file or its PostgreSQL database.
    public let catalog: any DeletionCatalog

    public init(library: Library, catalog: any DeletionCatalog) {
        self.library = library
        self.catalog = catalog
    }

    public struct Summary: Sendable, Equatable {
        /// Assets moved to the trash this run (or found there from an interrupted earlier run).
        public var trashed: [TrashItem] = []
        public var failures: [DeletionFailure] = []
        /// Deletions the destination had already settled its own way: nothing left to do, and no failure.
        public var settled: [SettledDeletion] = []
        public var exitStatus: ExitStatus { failures.isEmpty ? .success : .someFilesFailed }

        public init(trashed: [TrashItem] = [], failures: [DeletionFailure] = [], settled: [SettledDeletion] = []) {
            self.trashed = trashed
            self.failures = failures
            self.settled = settled
        }
    }

    /// - Parameter sourcePaths: where each checksum lived in the source (for the journal and
    ///   `restore --file-name-matches`); the asset's first source path is used when absent.
    /// A Live Photo is one unit: a still that goes to the trash takes its movie along, unless some source still
    /// holds the movie (it would only be imported again).
    public static func withMotionParts(_ candidates: [DeleteCandidate], catalog: any DeletionCatalog) async throws
        -> [DeleteCandidate] {
        var all = candidates
        var present = Set(candidates.map(\.checksum))
        var partners: [(DeleteCandidate, Checksum)] = []
        for candidate in candidates {
            if let pair = try await catalog.pair(of: candidate.checksum), pair.still == candidate.checksum,
               !present.contains(pair.motion) {
                partners.append((candidate, pair.motion))
            }
        }
        let held = try await catalog.heldByAnySource(Set(partners.map(\.1)))
        for (still, motion) in partners where !held.contains(motion) && present.insert(motion).inserted {
            all.append(DeleteCandidate(checksum: motion, basis: still.basis, confirmedAt: still.confirmedAt))
        }
        return all
    }

    public func trash(
        _ candidates: [DeleteCandidate], runID: String, sourcePaths: [Checksum: String] = [:], now: Date
    ) async throws -> Summary {
        var summary = Summary()
        guard !candidates.isEmpty else { return summary }
        let candidates = try await Self.withMotionParts(candidates, catalog: catalog)
        let layout = library.layout
        let mover = TrashMover(libraryRoot: layout.root)

        var items: [TrashItem] = []
        var recovered: [TrashItem] = []
        var earlierTrash: [Checksum: JournalEntry]?
        for candidate in candidates {
            let checksum = candidate.checksum
            guard let asset = try await catalog.asset(checksum) else {
                summary.failures.append(DeletionFailure(checksum: checksum, path: checksum.hex,
                                                        reason: "not in the library's catalog; nothing to trash"))
                continue
            }
            let sourcePath = sourcePaths[checksum] ?? asset.firstSourcePath
            if !FileSystem.exists(layout.absolute(asset.originalPath)) {
                // Moved by an interrupted earlier run? Its journal entry says where.
                if earlierTrash == nil { earlierTrash = try Self.latestTrashEntries(mover.journal) }
                if let entry = earlierTrash?[checksum], entry.paths.contains(asset.originalPath),
                   FileSystem.exists(layout.absolute("trash/\(entry.runID)/\(asset.originalPath)")) {
                    recovered.append(TrashItem(checksum: checksum, libraryPaths: entry.paths, sourcePath: entry.sourcePath))
                    try await catalog.markTrashed([(checksum, entry.paths)], runID: entry.runID, at: entry.timestamp)
                    continue
                }
            }
            // Sidecars follow their media to the trash (and back on restore).
            let sidecars = try await catalog.sidecars(of: checksum).map(\.path).filter { FileSystem.exists(layout.absolute($0)) }
            let paths = [asset.originalPath] + Self.derivedFiles(of: checksum, layout: layout) + sidecars
            items.append(TrashItem(checksum: checksum, libraryPaths: paths, sourcePath: sourcePath))
        }

        let moving = items
        let report = try await BlockingPool.run { try mover.trash(moving, runID: runID, now: now) }
        summary.failures += report.failures
        // An asset leaves the listing only once its original is in the trash.
        let originals = Dictionary(uniqueKeysWithValues: items.map { ($0.checksum, $0.libraryPaths[0]) })
        let trashed = report.trashed.filter { $0.libraryPaths.contains(originals[$0.checksum] ?? "") }
        try await catalog.markTrashed(trashed.map { ($0.checksum, $0.libraryPaths) }, runID: runID, at: now)
        summary.trashed = recovered + trashed
        try await catalog.removePending(summary.trashed.map(\.checksum))
        return summary
    }

    /// Library-relative paths of the files under `derived/ab/` named `<sha1>-*`, sorted.
    static func derivedFiles(of checksum: Checksum, layout: LibraryLayout) -> [String] {
        let hex = checksum.hex
        let folder = LibraryLayout.derivedFolderName + "/\(hex.prefix(2))"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: layout.absolute(folder)) else { return [] }
        return names.filter { $0.hasPrefix(hex + "-") }.sorted().map { folder + "/" + $0 }
    }

    /// The newest trash entry of each checksum that was not restored afterwards.
    static func latestTrashEntries(_ journal: DeletionJournal) throws -> [Checksum: JournalEntry] {
        var latest: [Checksum: JournalEntry] = [:]
        for entry in try journal.entries() {
            guard let checksum = entry.checksum else { continue }
            switch entry.action {
            case .trash: latest[checksum] = entry
            case .restore: latest[checksum] = nil
            case .purge: break
            }
        }
        return latest
    }
}
