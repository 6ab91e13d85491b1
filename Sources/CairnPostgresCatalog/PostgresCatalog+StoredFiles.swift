import CairnCatalog
import CairnCore
import Foundation
import PostgresNIO

/// `cairn check`'s question in PostgreSQL, answered as the SQLite catalog answers it.
extension PostgresCatalog: StoredFileCatalog {
    public func storedFiles(in folder: StoredFolder, shard: String) async throws -> [CatalogFile] {
        let upper = Self.shardBound(after: shard) ?? "g"
        return try await failing("read the catalog's files of shard \(shard) under \(folder.rawValue)/") { [self] in
            let query: PostgresQuery
            switch folder {
            case .originals:
                query = """
                    SELECT original_path AS path, size, \(CatalogFile.Role.original.rawValue)::text AS role, sha1 FROM cairn.asset
                    WHERE sha1 >= \(shard) AND sha1 < \(upper) AND original_path <> ''
                    """
            case .derived:
                query = """
                    SELECT d.path, d.byte_count AS size, d.role, d.sha1 FROM cairn.derived_file d JOIN cairn.asset a ON a.sha1 = d.sha1
                    WHERE d.sha1 >= \(shard) AND d.sha1 < \(upper) AND d.path <> a.original_path
                    """
            case .sidecars:
                query = """
                    SELECT s.path, max(s.source_size) AS size, \(CatalogFile.Role.sidecar.rawValue)::text AS role, s.sha1 FROM cairn.sidecar s
                    WHERE s.sha1 >= \(shard) AND s.sha1 < \(upper)
                      AND EXISTS (SELECT 1 FROM cairn.asset a WHERE a.sha1 = s.asset_sha1)
                    GROUP BY s.path, s.sha1
                    UNION ALL
                    SELECT metadata_path, NULL::bigint, \(CatalogFile.Role.albumMetadata.rawValue)::text, metadata_sha1 FROM cairn.album
                    WHERE metadata_sha1 >= \(shard) AND metadata_sha1 < \(upper)
                    """
            }
            return Self.ordered(try await client.query(query, logger: logger).records(StoredFileRow.self).compactMap(\.file))
        }
    }
}
