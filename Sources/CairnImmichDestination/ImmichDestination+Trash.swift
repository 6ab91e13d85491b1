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
                  let assetID = asset.remoteID else {
                summary.failures.append(DeletionFailure(checksum: candidate.checksum, path: candidate.checksum.hex,
                                                        reason: "not in this Immich destination's catalog; nothing to trash"))
                continue
            }
            items.append(TrashItem(checksum: candidate.checksum, libraryPaths: [Self.journalPath(assetID: assetID)],
                                   sourcePath: sourcePaths[candidate.checksum] ?? asset.firstSourcePath))
            assetIDs.append(assetID)
        }
        guard !items.isEmpty else { return summary }
        let journal = DeletionJournal(libraryRoot: library.layout.root)
        for item in items {
            try journal.append(JournalEntry(runID: runID, action: .trash, checksum: item.checksum,
                                            paths: item.libraryPaths, sourcePath: item.sourcePath, timestamp: now))
        }
        func failed(_ items: [TrashItem], _ error: ImmichFailure) -> [DeletionFailure] {
            items.map {
                DeletionFailure(checksum: $0.checksum, path: $0.sourcePath ?? $0.checksum.hex,
                                reason: FailureReason(error.description, category: error.category))
            }
        }
        // Immich refuses a whole batch for one id it will not let this key touch, so those are found and
        // settled apart; a tag's bulk add drops such ids silently.
        let refused: Set<String>
        do {
            let tag = try await client.upsertTag(Self.runTag(runID))
            try await client.tag(assetIDs, with: tag)
            refused = Set(try await client.sendRefusingAlone(assetIDs) { ids throws(ImmichFailure) in
                try await client.moveToTrash(ids)
            })
        } catch {
            summary.failures += failed(items, error)
            return summary
        }
        var trashed: [TrashItem] = [], gone: [TrashItem] = [], kept: [TrashItem] = []
        let refusedItems = zip(items, assetIDs).filter { refused.contains($0.1) }.map(\.0)
        if refusedItems.isEmpty {
            trashed = items
        } else {
            // Absent by checksum: purged from Immich (its trash emptied); present: in the Locked Folder, which
            // search and every change refuse to an API key.
            let presence: [Checksum: ImmichPresence]
            do { presence = try await client.presence(of: refusedItems.map(\.checksum)) } catch {
                summary.failures += failed(refusedItems, error)
                presence = [:]
            }
            for (item, id) in zip(items, assetIDs) {
                if !refused.contains(id) { trashed.append(item); continue }
                switch presence[item.checksum] {
                case nil: break
                case .absent?: gone.append(item)
                case .present?, .trashed?: kept.append(item)
                }
            }
        }
        // Gone for good is as trashed as it gets: the run records it, and its restore names it as purged.
        try await catalog.markTrashed((trashed + gone).map { ($0.checksum, $0.libraryPaths) }, runID: runID, at: now)
        try await catalog.removePending((trashed + gone + kept).map(\.checksum))
        if !kept.isEmpty {
            // The journal said "trash" before the batch went out; it says these stayed where they were.
            for item in kept {
                try journal.append(JournalEntry(runID: runID, action: .restore, checksum: item.checksum,
                                                paths: item.libraryPaths, sourcePath: item.sourcePath, timestamp: now))
            }
            try await TrashMaintenance.excludeEverywhere(kept.map(\.checksum), catalog: catalog, at: now)
        }
        summary.trashed = trashed
        summary.settled = gone.map { SettledDeletion(checksum: $0.checksum, path: $0.sourcePath ?? $0.checksum.hex, way: .alreadyGone) }
            + kept.map { SettledDeletion(checksum: $0.checksum, path: $0.sourcePath ?? $0.checksum.hex, way: .keptByPerson) }
        return summary
    }

    package func trashNote(count: Int, runID: String) -> String {
        "moved \(count) assets to Immich's trash, tagged \(Self.runTag(runID)) "
            + "(restore with `cairn restore --run-id \(runID) --destination immich`)"
    }

    /// What a restore brought back, and what it could not.
    package struct RestoreSummary: Sendable {
        package var restored: [Checksum]
        /// Assets the run's tag found in Immich's trash that this catalog did not know (another machine's run).
        package var restoredByTagOnly: Int
        /// Gone from Immich for good (its trash emptied, or its purge ran): nothing to restore.
        package var purged: [Checksum] = []
        /// Still in Immich, but refused to this key (the Locked Folder).
        package var refused: [Checksum] = []
    }

    /// Brings a run's assets back from Immich's trash, journals it, puts their records back in the catalog and
    /// excludes them from trashing, so the next sync does not take again what a person just brought back.
    package func restore(runID: String, library: Library, catalog: any DeletionCatalog, now: Date) async throws
        -> RestoreSummary {
        let trashed = try await catalog.trashedAssets(runID: runID)
        var byAssetID: [String: TrashedAssetRecord] = [:]
        for record in trashed {
            if let id = record.asset.remoteID { byAssetID[id] = record }
        }
        var ids = Set(byAssetID.keys)
        var taggedOnly = 0
        let tag = try await client.upsertTag(Self.runTag(runID))
        for asset in try await client.assets(taggedWith: tag) where asset.isTrashed && ids.insert(asset.id).inserted {
            taggedOnly += 1
        }
        // What Immich purged since (a person emptied its trash, or its 30-day purge ran) is found by checksum first:
        // one such id would make Immich refuse the whole restore.
        let presence = try await client.presence(of: trashed.map(\.asset.checksum))
        let purged = trashed.filter { presence[$0.asset.checksum] == .absent }
        for record in purged {
            if let id = record.asset.remoteID { ids.remove(id) }
        }
        let restorable = trashed.filter { presence[$0.asset.checksum] != .absent }
        let journal = DeletionJournal(libraryRoot: library.layout.root)
        for record in restorable {
            try journal.append(JournalEntry(runID: runID, action: .restore, checksum: record.asset.checksum,
                                            paths: record.libraryPaths, timestamp: now))
        }
        let refusedIDs = Set(try await client.sendRefusingAlone(ids.sorted()) { ids throws(ImmichFailure) in
            _ = try await client.restoreFromTrash(ids)
        })
        let refused = restorable.filter {
            $0.asset.remoteID.map(refusedIDs.contains) ?? false
        }
        let refusedSet = Set(refused.map(\.asset.checksum))
        let back = try await catalog.restoreTrashed(
            restorable.map(\.asset.checksum).filter { !refusedSet.contains($0) }, runID: runID)
        try await TrashMaintenance.excludeEverywhere(back, catalog: catalog, at: now)
        let taggedRefused = refusedIDs.count - refused.count
        return RestoreSummary(restored: back, restoredByTagOnly: taggedOnly - taggedRefused,
                              purged: purged.map(\.asset.checksum), refused: refused.map(\.asset.checksum))
    }
}
