import CairnCatalog
import CairnCore
import CairnLibrary
import CairnReconcile
import CairnStore
import Foundation

/// `cairn restore` and `cairn trash purge` over an open library: the trash's file moves (or, for a library on a
/// store, its objects checked and purged) plus what the catalog must learn from them. Callers hold the `LibraryLock`.
public struct TrashMaintenance: Sendable {
    public let library: Library
    /// The library's catalog: its SQLite file or its PostgreSQL database.
    public let catalog: any DeletionCatalog
    /// The store the library's files are in (`StoreTrash`); nil: its folder (`TrashMover`).
    public let store: (any ObjectStore)?

    public init(library: Library, catalog: any DeletionCatalog, store: (any ObjectStore)? = nil) {
        self.library = library
        self.catalog = catalog
        self.store = store
    }

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
                        now: Date) async throws -> RestoreSummary {
        let mover = TrashMover(libraryRoot: library.layout.root)
        // Restoring one part of a Live Photo restores both.
        var checksums = checksums
        if let asked = checksums {
            for checksum in asked {
                if let pair = try await catalog.pair(of: checksum) { checksums?.formUnion([pair.still, pair.motion]) }
            }
        }
        let chosen = checksums
        let report: RestoreReport
        if let store {
            report = try await StoreTrash(libraryRoot: library.layout.root, catalog: catalog, store: store)
                .restore(runID: runID, checksums: chosen, fileNameMatching: pattern, now: now)
        } else {
            report = try await BlockingPool.run {
                try mover.restore(runID: runID, checksums: chosen, fileNameMatching: pattern, now: now)
            }
        }
        var back = Set(report.restored.map(\.checksum))
        // Files already in place (restored before, or imported again): their records come back too.
        let alreadyPresent = Set(report.alreadyPresent)
        for trashed in try await catalog.trashedAssets(runID: runID)
        where alreadyPresent.contains(trashed.asset.originalPath) {
            back.insert(trashed.asset.checksum)
        }
        let assetsBack = try await catalog.restoreTrashed(back.sorted(), runID: runID)
        let excluded = back.sorted()
        try await Self.excludeEverywhere(excluded, catalog: catalog, at: now)
        return RestoreSummary(files: report, assetsBack: assetsBack, excluded: excluded)
    }

    /// Excludes `checksums` from trashing in every source of the catalog: what a person brought back stays.
    public static func excludeEverywhere(_ checksums: [Checksum], catalog: any DeletionCatalog, at now: Date) async throws {
        let sources = try await catalog.sources().compactMap(\.id)
        if !sources.isEmpty, !checksums.isEmpty { try await catalog.exclude(checksums, sourceIDs: sources, at: now) }
    }

    /// Deletes for good the trash of runs whose last trashing is at least `days` days old, and
    /// forgets their assets.
    public func purge(olderThanDays days: Int, now: Date) async throws -> PurgeReport {
        let mover = TrashMover(libraryRoot: library.layout.root), age = TimeInterval(days) * 86_400
        let report: PurgeReport
        if let store {
            report = try await StoreTrash(libraryRoot: library.layout.root, catalog: catalog, store: store)
                .purge(olderThan: age, now: now)
        } else {
            report = try await BlockingPool.run { try mover.purge(olderThan: age, now: now) }
        }
        try await catalog.forgetTrashed(runIDs: report.purgedRuns)
        return report
    }
}
