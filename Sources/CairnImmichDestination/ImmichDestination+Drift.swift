import CairnCatalog
import CairnCore
import CairnImmich
import CairnLibrary
import CairnTrash
import Foundation

/// Drift: content cairn uploaded that a person later deleted in Immich (in its trash), or that Immich purged.
extension ImmichDestination {
    /// A `full` check asks the server about every asset's checksum (`bulk-upload-check`, one request per
    /// `ImmichClient.presencePage`); a `trash` check asks only what Immich's trash took since `since` (one search,
    /// a page per 1,000 found). An asset this catalog has no row for (cairn trashed it) is not drift.
    package func findDrift(_ kind: DestinationCheckKind, since: Date?, library: Library, catalog: any AssetCatalog,
                           now: Date) async throws -> [DriftRecord] {
        switch kind {
        case .full:
            let checksums = try await catalog.assetChecksums()
            guard !checksums.isEmpty else { return [] }
            let presence = try await client.presence(of: checksums.sorted())
            return presence.compactMap { checksum, state in
                switch state {
                case .present: return nil
                case .trashed: return DriftRecord(checksum: checksum, state: .trashed, seenAt: now)
                case .absent: return DriftRecord(checksum: checksum, state: .missing, seenAt: now)
                }
            }.sorted { $0.checksum < $1.checksum }
        case .trash:
            guard let since, try await catalog.assetCount() > 0 else { return [] }
            var found: [DriftRecord] = []
            for asset in try await client.assetsTrashed(since: since) where asset.isTrashed {
                guard let checksum = asset.contentChecksum,
                      let record = try await catalog.asset(checksum),
                      record.remoteID == asset.id else { continue }
                found.append(DriftRecord(checksum: checksum, state: .trashed, seenAt: now))
            }
            return found
        }
    }

    /// Restores from Immich's trash (journaled first, as every trash action is); an asset Immich refuses alone
    /// (purged meanwhile, or moved to the Locked Folder) stays as it is and is left for the next check.
    package func restoreDrift(_ trashed: [Checksum], runID: String, library: Library, catalog: any AssetCatalog,
                              now: Date) async throws -> [Checksum] {
        var ids: [String: Checksum] = [:]
        let journal = DeletionJournal(libraryRoot: library.layout.root)
        for checksum in trashed {
            guard let id = try await catalog.asset(checksum)?.remoteID else { continue }
            try journal.append(JournalEntry(runID: runID, action: .restore, checksum: checksum,
                                            paths: [Self.journalPath(assetID: id)], timestamp: now))
            ids[id] = checksum
        }
        let refused = Set(try await client.sendRefusingAlone(ids.keys.sorted()) { batch throws(ImmichFailure) in
            _ = try await client.restoreFromTrash(batch)
        })
        return ids.filter { !refused.contains($0.key) }.map(\.value).sorted()
    }
}
