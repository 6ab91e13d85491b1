import CairnCore
import Foundation
import GRDB

/// Read-only queries for `cairn asset` and `cairn ls`: what the library holds, as a person asks about it.
extension SQLiteCatalog {
    /// Every source path known to hold `checksum`, from the last scans.
    public func sourcePaths(of checksum: Checksum) async throws -> [SourcePath] {
        try await read { db in
            try SourcePathColumns.fetchAll(db, sql: """
                SELECT source.root_path AS root, source_file.relative_path AS relative
                FROM source_file JOIN source ON source.id = source_file.source_id
                WHERE source_file.sha1 = ? ORDER BY source.root_path, source_file.relative_path
                """, arguments: [checksum.hex]).map { SourcePath(root: $0.root, relativePath: $0.relative) }
        }
    }

    /// Checksums of assets whose content a source path named `path` holds (relative, or absolute under a root).
    public func checksums(atSourcePath path: String) async throws -> [Checksum] {
        try await read { db in
            try String.fetchAll(db, sql: """
                SELECT DISTINCT source_file.sha1 FROM source_file JOIN source ON source.id = source_file.source_id
                WHERE source_file.sha1 IS NOT NULL
                  AND (source_file.relative_path = ? OR source.root_path || '/' || source_file.relative_path = ?)
                """, arguments: [path, path]).compactMap { Checksum(hex: $0) }
        }
    }

    /// Assets with what listing needs, ordered by capture date (assets without one last), then checksum.
    /// `albums`, when given, keeps the members of those albums (by id) alone.
    public func listedAssets(since: Date?, until: Date?, kind: MediaKind?, albums: [Int64]?) async throws
        -> [ListedAsset] {
        try await read { db in
            var conditions: [String] = []
            var arguments: [any DatabaseValueConvertible] = []
            if let albums {
                let marks = Array(repeating: "?", count: max(albums.count, 1)).joined(separator: ", ")
                conditions.append("asset.sha1 IN (SELECT asset_sha1 FROM album_member WHERE album_id IN (\(marks)))")
                arguments += albums.isEmpty ? [Int64(-1)] : albums
            }
            if let since { conditions.append("media_probe.capture_date >= ?"); arguments.append(StoredDate.text(since)) }
            if let until { conditions.append("media_probe.capture_date < ?"); arguments.append(StoredDate.text(until)) }
            if let kind { conditions.append("asset.kind = ?"); arguments.append(kind.rawValue) }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let rows = try Row.fetchAll(db, sql: """
                SELECT asset.*, media_probe.capture_date AS probe_capture_date, media_probe.probe_json AS probe_json
                FROM asset LEFT JOIN media_probe ON media_probe.sha1 = asset.sha1
                \(filter)
                ORDER BY media_probe.capture_date IS NULL, media_probe.capture_date, asset.sha1
                """, arguments: StatementArguments(arguments))
            return try rows.map { columns in
                let probe = try ListedProbeColumns(row: columns)
                return ListedAsset(asset: try AssetRecord(row: columns), captureDate: probe.probeCaptureDate,
                                   probeJSON: probe.probeJSON)
            }
        }
    }
}

/// A source path as `sourcePaths` reads it.
private struct SourcePathColumns: Decodable, FetchableRecord, CatalogRecord {
    var root: String
    var relative: String
}

/// The probe columns a listing joins to each asset row, in either catalog.
package struct ListedProbeColumns: Decodable, FetchableRecord, CatalogRecord {
    package var probeCaptureDate: Date?
    package var probeJSON: String?

    enum CodingKeys: String, CodingKey {
        case probeCaptureDate = "probe_capture_date", probeJSON = "probe_json"
    }
}
