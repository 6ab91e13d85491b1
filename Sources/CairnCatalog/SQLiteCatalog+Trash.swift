import CairnCore
import Foundation
import GRDB

// Assets moved to the library's trash leave the `asset` table (so every listing, the import's
// "already held" check and reconciliation's library set stop seeing them) and wait in
// `trashed_asset` until a restore puts them back or a purge forgets them.
extension SQLiteCatalog {
    /// Moves the assets' records to `trashed_asset` in one transaction. Checksums without an asset are skipped.
    public func markTrashed(_ items: [(checksum: Checksum, libraryPaths: [String])], runID: String, at date: Date) async throws {
        guard !items.isEmpty else { return }
        let items = items.map { TrashedPaths(checksum: $0.checksum, libraryPaths: $0.libraryPaths) }
        try await write { db in
            for item in items {
                guard let asset = try AssetRecord.fetchOne(db, key: item.checksum) else { continue }
                try Self.insertTrashed(TrashedAssetRecord(asset: asset, trashRunID: runID, trashedAt: date,
                                                          libraryPaths: item.libraryPaths), db)
                _ = try AssetRecord.deleteOne(db, key: item.checksum)
            }
        }
    }

    /// Puts the records of assets restored from `runID` back into `asset` (an asset imported again
    /// meanwhile keeps its record); returns the checksums whose records came back.
    @discardableResult
    public func restoreTrashed(_ checksums: [Checksum], runID: String) async throws -> [Checksum] {
        try await write { db in
            var restored: [Checksum] = []
            for checksum in checksums {
                guard let trashed = try Self.trashed(db, runID: runID, checksum: checksum) else { continue }
                try trashed.asset.insert(db, onConflict: .ignore)
                try db.execute(sql: "DELETE FROM trashed_asset WHERE sha1 = ? AND trash_run_id = ?",
                               arguments: [checksum, runID])
                restored.append(checksum)
            }
            return restored.sorted()
        }
    }

    /// Forgets the records of runs whose trash was purged for good.
    public func forgetTrashed(runIDs: [String]) async throws {
        guard !runIDs.isEmpty else { return }
        try await write { db in
            for runID in runIDs {
                try db.execute(sql: "DELETE FROM trashed_asset WHERE trash_run_id = ?", arguments: [runID])
            }
        }
    }

    /// Assets in the trash, for one run or all, by trash time then checksum.
    public func trashedAssets(runID: String?) async throws -> [TrashedAssetRecord] {
        try await read { db in
            var request = TrashedAssetRow.all()
            if let runID { request = request.filter(TrashedAssetRow.Columns.trashRunID == runID) }
            return try request.order(TrashedAssetRow.Columns.trashedAt, TrashedAssetRow.Columns.sha1).fetchAll(db)
                .compactMap(\.record)
        }
    }

    static func trashed(_ db: Database, runID: String, checksum: Checksum) throws -> TrashedAssetRecord? {
        try TrashedAssetRow.filter(TrashedAssetRow.Columns.sha1 == checksum.hex && TrashedAssetRow.Columns.trashRunID == runID)
            .fetchOne(db)?.record
    }

    static func insertTrashed(_ record: TrashedAssetRecord, _ db: Database) throws {
        let asset = record.asset
        let paths = String(decoding: try JSONEncoder().encode(record.libraryPaths), as: UTF8.self)
        try db.execute(sql: """
            INSERT OR REPLACE INTO trashed_asset (sha1, trash_run_id, trashed_at, library_paths, kind, size,
                original_extension, first_source_path, original_path, remote_id, imported_at, run_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [asset.checksum, record.trashRunID, StoredDate.text(record.trashedAt), paths, asset.kind,
                             asset.size, asset.originalExtension, asset.firstSourcePath, asset.originalPath,
                             asset.remoteID, StoredDate.text(asset.importedAt), asset.runID])
    }
}
