import CairnCatalog
import CairnCore
import CairnLibrary
import CairnReconcile
import Foundation

/// `cairn restore` and `cairn trash purge` over an open library: the trash's file moves plus what
/// the catalog must learn from them. Callers hold the `LibraryLock`.
public struct TrashMaintenance: Sendable {
    public let library: Library

    public init(library: Library) { self.library = library }

    public struct RestoreSummary: Sendable, Equatable {
        public var files: RestoreReport
        /// Assets whose catalog record came back.
        public var assetsBack: [Checksum]
        /// Checksums now excluded from trashing in every source that saw them, so the next sync does
        /// not trash again what a person just brought back.
        public var excluded: [Checksum]
        public var exitStatus: ExitStatus { files.failures.isEmpty ? .success : .someFilesFailed }
    }

    /// Moves a run's trashed files back byte-identical (all, or those of `checksums`, or those whose
    /// file name matches `fileNameMatching`), journals it, and puts the assets back in the catalog.
    public func restore(runID: String, checksums: Set<Checksum>? = nil, fileNameMatching pattern: String? = nil,
                        now: Date) throws -> RestoreSummary {
        let mover = TrashMover(libraryRoot: library.layout.root)
        // Restoring one part of a Live Photo restores both.
        var checksums = checksums
        if let asked = checksums {
            for checksum in asked {
                if let pair = try library.catalog.pair(of: checksum) { checksums?.formUnion([pair.still, pair.motion]) }
            }
        }
        let report = try mover.restore(runID: runID, checksums: checksums, fileNameMatching: pattern, now: now)
        var back = Set(report.restored.map(\.checksum))
        // Files already in place (restored before, or imported again): their records come back too.
        let alreadyPresent = Set(report.alreadyPresent)
        for trashed in try library.catalog.trashedAssets(runID: runID)
        where alreadyPresent.contains(trashed.asset.originalPath) {
            back.insert(trashed.asset.checksum)
        }
        let assetsBack = try library.catalog.restoreTrashed(back.sorted(), runID: runID)
        let store = ReconcileStore(catalog: library.catalog)
        let sources = try store.sources().compactMap(\.id)
        let excluded = back.sorted()
        if !sources.isEmpty, !excluded.isEmpty { try store.exclude(excluded, sourceIDs: sources, at: now) }
        return RestoreSummary(files: report, assetsBack: assetsBack, excluded: excluded)
    }

    /// Deletes for good the trash of runs whose last trashing is at least `days` days old, and
    /// forgets their assets.
    public func purge(olderThanDays days: Int, now: Date) throws -> PurgeReport {
        let report = try TrashMover(libraryRoot: library.layout.root).purge(olderThan: TimeInterval(days) * 86_400, now: now)
        try library.catalog.forgetTrashed(runIDs: report.purgedRuns)
        return report
    }
}
