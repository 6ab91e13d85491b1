import CairnCatalog
import CairnCore
import Foundation
import PostgresNIO

/// The read side's questions (`BrowseCatalog`) in PostgreSQL, answered as the SQLite catalog answers them; text
/// compared and ordered bytewise (`COLLATE "C"`), as SQLite does.
extension PostgresCatalog: BrowseCatalog {
    public func sourcePaths(of checksum: Checksum) async throws -> [SourcePath] {
        return try await failing("read the source paths of \(checksum)") { [self] in
            let rows = try await client.query("""
                SELECT s.root_path, f.relative_path FROM cairn.source_file f JOIN cairn.source s ON s.id = f.source_id
                WHERE f.sha1 = \(checksum.hex) ORDER BY s.root_path COLLATE "C", f.relative_path COLLATE "C"
                """, logger: logger)
            var paths: [SourcePath] = []
            for try await (root, relative) in rows.decode((String, String).self) {
                paths.append(SourcePath(root: root, relativePath: relative))
            }
            return paths
        }
    }

    public func checksums(atSourcePath path: String) async throws -> [Checksum] {
        return try await failing("find the content at \(path)") { [self] in
            let rows = try await client.query("""
                SELECT DISTINCT f.sha1 FROM cairn.source_file f JOIN cairn.source s ON s.id = f.source_id
                WHERE f.sha1 IS NOT NULL AND (f.relative_path = \(path) OR s.root_path || '/' || f.relative_path = \(path))
                """, logger: logger)
            return try await rows.checksums()
        }
    }

    public func listedAssets(since: Date?, until: Date?, kind: MediaKind?, albums: [Int64]?) async throws
        -> [ListedAsset] {
        return try await failing("list the library's assets") { [self] in
            var binds = PostgresBindings()
            var conditions: [String] = []
            func bind(_ value: some PostgresEncodable & Sendable) throws -> String {
                try binds.append(value)
                return "$\(binds.count)"
            }
            if let albums {
                conditions.append("a.sha1 IN (SELECT asset_sha1 FROM cairn.album_member WHERE album_id = ANY(\(try bind(albums))::bigint[]))")
            }
            if let since { conditions.append("p.capture_date >= \(try bind(since))") }
            if let until { conditions.append("p.capture_date < \(try bind(until))") }
            if let kind { conditions.append("a.kind = \(try bind(kind.rawValue))") }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT a.sha1, a.kind, a.size, a.original_extension, a.first_source_path, a.original_path, a.remote_id, a.imported_at,
                  a.run_id, a.no_preview_reason, p.capture_date AS probe_capture_date, p.probe_json AS probe_json
                FROM cairn.asset a LEFT JOIN cairn.media_probe p ON p.sha1 = a.sha1
                \(filter)
                ORDER BY p.capture_date IS NULL, p.capture_date, a.sha1 COLLATE "C"
                """, binds: binds), logger: logger)
            var listed: [ListedAsset] = []
            for try await row in rows {
                let probe = try ListedProbeColumns(from: PostgresRowDecoder(row))
                listed.append(ListedAsset(asset: try AssetRecord(from: PostgresRowDecoder(row)),
                                          captureDate: probe.probeCaptureDate, probeJSON: probe.probeJSON))
            }
            return listed
        }
    }

    public func importItem(_ checksum: Checksum) async throws -> ItemRecord? {
        return try await failing("read the import item of \(checksum)") { [self] in
            try await client.query(Self.itemsQuery(where: "i.sha1 = $1", binds: try Self.binds(checksum.hex)), logger: logger)
                .records(ItemRecord.self).first
        }
    }
}

/// The status page's and the metrics' small aggregate reads, in PostgreSQL.
extension PostgresCatalog {
    public func assetTally(broughtInBy runID: String?) async throws -> [MediaKind: (items: Int, bytes: Int64)] {
        return try await failing("tally the library's assets") { [self] in
            var binds = PostgresBindings()
            if let runID { binds.append(runID) }
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT kind, count(*)::bigint, coalesce(sum(size), 0)::bigint FROM cairn.asset
                \(runID == nil ? "" : "WHERE run_id = $1") GROUP BY kind
                """, binds: binds), logger: logger)
            var tally: [MediaKind: (items: Int, bytes: Int64)] = [:]
            for try await (kind, items, bytes) in rows.decode((String, Int64, Int64).self) {
                guard let kind = MediaKind(rawValue: kind) else { continue }
                tally[kind] = (Int(items), bytes)
            }
            return tally
        }
    }

    public func newestAssets(limit: Int) async throws -> [AssetRecord] {
        try await assets(where: "TRUE", nil, order: "imported_at DESC, sha1 COLLATE \"C\"", limit: max(0, limit))
    }

    public func thumbnailed(_ checksums: [Checksum]) async throws -> Set<Checksum> {
        guard !checksums.isEmpty else { return [] }
        let hexes = checksums.map(\.hex)
        return try await failing("look up \(checksums.count) thumbnails") { [self] in
            let rows = try await client.query("""
                SELECT sha1 FROM cairn.derived_file WHERE role = \(DerivedFileRecord.Role.thumbnail.rawValue)
                AND sha1 = ANY(\(hexes)::text[])
                """, logger: logger)
            return Set(try await rows.checksums())
        }
    }
}
