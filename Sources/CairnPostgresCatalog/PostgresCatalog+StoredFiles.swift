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
                    SELECT original_path, size, \(CatalogFile.Role.original.rawValue), sha1 FROM cairn.asset
                    WHERE sha1 >= \(shard) AND sha1 < \(upper) AND original_path <> ''
                    """
            case .derived:
                query = """
                    SELECT d.path, d.byte_count, d.role, d.sha1 FROM cairn.derived_file d JOIN cairn.asset a ON a.sha1 = d.sha1
                    WHERE d.sha1 >= \(shard) AND d.sha1 < \(upper) AND d.path <> a.original_path
                    """
            case .sidecars:
                query = """
                    SELECT s.path, max(s.source_size), \(CatalogFile.Role.sidecar.rawValue), s.sha1 FROM cairn.sidecar s
                    WHERE s.sha1 >= \(shard) AND s.sha1 < \(upper)
                      AND EXISTS (SELECT 1 FROM cairn.asset a WHERE a.sha1 = s.asset_sha1)
                    GROUP BY s.path, s.sha1
                    UNION ALL
                    SELECT metadata_path, NULL::bigint, \(CatalogFile.Role.albumMetadata.rawValue), metadata_sha1 FROM cairn.album
                    WHERE metadata_sha1 >= \(shard) AND metadata_sha1 < \(upper)
                    """
            }
            let rows = try await client.query(query, logger: logger)
            var files: [CatalogFile] = []
            for try await (path, size, role, hex) in rows.decode((String, Int64?, String, String).self) {
                guard let role = CatalogFile.Role(rawValue: role), let checksum = Checksum(hex: hex) else { continue }
                files.append(CatalogFile(path: path, size: size.flatMap { $0 > 0 ? $0 : nil }, role: role, checksum: checksum))
            }
            return Self.ordered(files)
        }
    }
}
