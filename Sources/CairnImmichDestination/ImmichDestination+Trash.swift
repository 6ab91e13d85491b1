import CairnCatalog
import CairnCore
import CairnImmich
import CairnLibrary
import CairnReconcile
import CairnTrash
import Foundation

/// Deletions reach Immich only through its trash: each asset is journaled (fsynced) first, tagged with the
/// run's tag so Immich itself can show what a run took, then moved with `force: false`. cairn never purges
/// Immich's trash. A restore brings a run's assets back by the catalog's record of the run, and by its tag.
extension ImmichDestination {
    /// The tag every asset a run trashes carries.
    static func runTag(_ runID: String) -> String { "cairn/v1/run/\(runID)" }

    package func trash(_ candidates: [DeleteCandidate], runID: String, sourcePaths: [Checksum: String],
                       library: Library, catalog: any DeletionCatalog, now: Date) async throws -> DeletionRun.Summary {
        var summary = DeletionRun.Summary()
        // A Live Photo is one unit, and Immich does not cascade through the link: both parts go.
        let candidates = try await DeletionRun.withMotionParts(candidates, catalog: catalog)
        var items: [TrashItem] = []
        var assetIDs: [String] = []
        for candidate in candidates {
            guard let asset = try await catalog.asset(candidate.checksum),
                  let assetID = Self.assetID(inOriginalPath: asset.originalPath) else {
                summary.failures.append(DeletionFailure(checksum: candidate.checksum, path: candidate.checksum.hex,
                                                        reason: "not in this Immich destination's catalog; nothing to trash"))
                continue
            }
            items.append(TrashItem(checksum: candidate.checksum, libraryPaths: [asset.originalPath],
                                   sourcePath: sourcePaths[candidate.checksum] ?? asset.firstSourcePath))
            assetIDs.append(assetID)
        }
        guard !items.isEmpty else { return summary }
        let journal = DeletionJournal(libraryRoot: library.layout.root)
        for item in items {
            try journal.append(JournalEntry(runID: runID, action: .trash, checksum: item.checksum,
                                            paths: item.libraryPaths, sourcePath: item.sourcePath, timestamp: now))
        }
        do {
            let tag = try await client.upsertTag(Self.runTag(runID))
            try await client.tag(assetIDs, with: tag)
            try await client.moveToTrash(assetIDs)
        } catch {
            let failure = refusedOrFailed(error)
            summary.failures += items.map {
                DeletionFailure(checksum: $0.checksum, path: $0.sourcePath ?? $0.checksum.hex, reason: FailureReason(failure.description, category: failure.category))
            }
            return summary
        }
        try await catalog.markTrashed(items.map { ($0.checksum, $0.libraryPaths) }, runID: runID, at: now)
        try await catalog.removePending(items.map(\.checksum))
        summary.trashed = items
        return summary
    }

    package func trashNote(count: Int, runID: String) -> String {
        "moved \(count) assets to Immich's trash, tagged \(Self.runTag(runID)) "
            + "(restore with `cairn restore --run-id \(runID) --destination immich`)"
    }

    /// What a restore brought back.
    package struct RestoreSummary: Sendable {
        package var restored: [Checksum]
        /// Assets the run's tag found in Immich's trash that this catalog did not know (another machine's run).
        package var restoredByTagOnly: Int
    }

    /// Brings a run's assets back from Immich's trash, journals it, puts their records back in the catalog and
    /// excludes them from trashing, so the next sync does not take again what a person just brought back.
    package func restore(runID: String, library: Library, catalog: any DeletionCatalog, now: Date) async throws
        -> RestoreSummary {
        let trashed = try await catalog.trashedAssets(runID: runID)
        var byAssetID: [String: TrashedAssetRecord] = [:]
        for record in trashed {
            if let id = Self.assetID(inOriginalPath: record.asset.originalPath) { byAssetID[id] = record }
        }
        var ids = Set(byAssetID.keys)
        var taggedOnly = 0
        do {
            let tag = try await client.upsertTag(Self.runTag(runID))
            for asset in try await client.assets(taggedWith: tag) where asset.isTrashed && ids.insert(asset.id).inserted {
                taggedOnly += 1
            }
        } catch {
            throw refusedOrFailed(error)
        }
        let journal = DeletionJournal(libraryRoot: library.layout.root)
        for record in trashed {
            try journal.append(JournalEntry(runID: runID, action: .restore, checksum: record.asset.checksum,
                                            paths: record.libraryPaths, timestamp: now))
        }
        do { try await client.restoreFromTrash(ids.sorted()) } catch { throw refusedOrFailed(error) }
        let back = try await catalog.restoreTrashed(trashed.map(\.asset.checksum), runID: runID)
        try await TrashMaintenance.excludeEverywhere(back, catalog: catalog, at: now)
        return RestoreSummary(restored: back, restoredByTagOnly: taggedOnly)
    }
}
