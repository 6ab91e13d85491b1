import CairnCatalog
import CairnCore
import Foundation
import PostgresNIO

/// The library's trash in PostgreSQL, as `TrashCatalog` describes it: each move one statement, the asset row
/// deleted and its trashed copy written together.
extension PostgresCatalog: TrashCatalog {
    /// The columns a trashed asset keeps of its asset row.
    private static let trashedAssetColumns = """
        sha1, kind, size, original_extension, first_source_path, original_path, remote_id, imported_at, run_id
        """

    public func markTrashed(_ items: [(checksum: Checksum, libraryPaths: [String])], runID: String, at date: Date) async throws {
        guard !items.isEmpty else { return }
        let latest = items.lastOfEach(by: \.checksum)
        let checksums = latest.map(\.checksum.hex)
        let paths = try latest.map { String(decoding: try JSONEncoder().encode($0.libraryPaths), as: UTF8.self) }
        return try await failing("move \(items.count) assets to the trash of run \(runID)") { [self] in
            try await client.query(PostgresQuery(unsafeSQL: """
                WITH moved AS (
                  DELETE FROM cairn.asset a USING unnest($1::text[], $2::text[]) AS x(sha1, library_paths)
                  WHERE a.sha1 = x.sha1
                  RETURNING a.*, x.library_paths)
                INSERT INTO cairn.trashed_asset (trash_run_id, trashed_at, library_paths, \(Self.trashedAssetColumns))
                SELECT $3, $4, library_paths, \(Self.trashedAssetColumns) FROM moved
                ON CONFLICT (sha1, trash_run_id) DO UPDATE SET trashed_at = excluded.trashed_at,
                  library_paths = excluded.library_paths, kind = excluded.kind, size = excluded.size,
                  original_extension = excluded.original_extension, first_source_path = excluded.first_source_path,
                  original_path = excluded.original_path, remote_id = excluded.remote_id, imported_at = excluded.imported_at, run_id = excluded.run_id
                """, binds: try Self.binds(checksums, paths, runID, date)), logger: logger)
        }
    }

    public func restoreTrashed(_ checksums: [Checksum], runID: String) async throws -> [Checksum] {
        guard !checksums.isEmpty else { return [] }
        let hexes = checksums.map(\.hex)
        return try await failing("restore \(checksums.count) assets from the trash of run \(runID)") { [self] in
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                WITH restored AS (
                  DELETE FROM cairn.trashed_asset WHERE trash_run_id = $2 AND sha1 = ANY($1::text[]) RETURNING *),
                back AS (
                  INSERT INTO cairn.asset (\(Self.trashedAssetColumns)) SELECT \(Self.trashedAssetColumns) FROM restored
                  ON CONFLICT (sha1) DO NOTHING)
                SELECT sha1 FROM restored
                """, binds: try Self.binds(hexes, runID)), logger: logger)
            return try await rows.checksums().sorted()
        }
    }

    public func forgetTrashed(runIDs: [String]) async throws {
        guard !runIDs.isEmpty else { return }
        return try await failing("forget the trash of \(runIDs.count) runs") { [self] in
            try await client.query("DELETE FROM cairn.trashed_asset WHERE trash_run_id = ANY(\(runIDs)::text[])", logger: logger)
        }
    }

    public func trashedAssets(runID: String?) async throws -> [TrashedAssetRecord] {
        return try await failing("read the trash") { [self] in
            var binds = PostgresBindings()
            if let runID { binds.append(runID) }
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT trash_run_id, trashed_at, library_paths, \(Self.trashedAssetColumns) FROM cairn.trashed_asset
                \(runID == nil ? "" : "WHERE trash_run_id = $1") ORDER BY trashed_at, sha1
                """, binds: binds), logger: logger)
            return try await rows.records(TrashedAssetRow.self).compactMap(\.record)
        }
    }
}
