import CairnCatalog
import CairnCore
import Foundation
import PostgresNIO

/// Live Photo pairs, sidecars and albums in PostgreSQL, as `AssetLinkCatalog` describes them. Text is ordered
/// bytewise (`COLLATE "C"`), as SQLite orders it, whatever the database's locale.
extension PostgresCatalog: AssetLinkCatalog {
    public func savePairs(_ pairs: [AssetPairRecord]) async throws {
        guard !pairs.isEmpty else { return }
        let rows = try Self.json(pairs)
        return try await failing("save \(pairs.count) Live Photo pairs") { [self] in
            try await client.query("""
                INSERT INTO cairn.asset_pair (still_sha1, motion_sha1, basis, paired_at)
                SELECT x.still_sha1, x.motion_sha1, x.basis, to_timestamp(x.paired_at)
                FROM jsonb_to_recordset(\(rows)::jsonb) AS x(still_sha1 text, motion_sha1 text, basis text,
                  paired_at double precision)
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }

    public func pair(of checksum: Checksum) async throws -> AssetPairRecord? {
        try await pairs(where: "still_sha1 = $1 OR motion_sha1 = $1", checksum.hex).first
    }

    public func allPairs() async throws -> [AssetPairRecord] { try await pairs(where: "true", nil) }

    public func pairsAwaitingLink() async throws -> [AssetPairRecord] { try await pairs(where: "linked_at IS NULL", nil) }

    public func markPairsLinked(_ stills: [Checksum], at date: Date) async throws {
        guard !stills.isEmpty else { return }
        return try await failing("record \(stills.count) Live Photo links") { [self] in
            try await client.query("""
                UPDATE cairn.asset_pair SET linked_at = to_timestamp(\(date.timeIntervalSince1970))
                WHERE still_sha1 = ANY(\(stills.map(\.hex))::text[])
                """, logger: logger)
        }
    }

    private func pairs(where condition: String, _ checksum: String?) async throws -> [AssetPairRecord] {
        return try await failing("read Live Photo pairs") { [self] in
            var binds = PostgresBindings()
            if let checksum { binds.append(checksum) }
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT still_sha1, motion_sha1, basis, paired_at, linked_at FROM cairn.asset_pair WHERE \(condition)
                ORDER BY still_sha1
                """, binds: binds), logger: logger)
            return try await rows.records(AssetPairRecord.self)
        }
    }

    public func unpairedAssets(after checksum: Checksum?, limit: Int) async throws -> [PairingCandidate] {
        return try await failing("read the assets not yet paired") { [self] in
            let after = checksum?.hex ?? ""
            // Checksums are lowercase hex: any collation orders them as bytes do.
            let rows = try await client.query("""
                SELECT a.sha1, a.kind, a.first_source_path, p.probe_json::jsonb ->> 'contentIdentifier' AS content_identifier,
                  p.duration_seconds, p.capture_date
                FROM cairn.asset a JOIN cairn.media_probe p ON p.sha1 = a.sha1
                WHERE a.sha1 > \(after) AND a.kind IN ('photo', 'video')
                  AND NOT EXISTS (SELECT 1 FROM cairn.asset_pair q WHERE q.still_sha1 = a.sha1 OR q.motion_sha1 = a.sha1)
                ORDER BY a.sha1 LIMIT \(limit)
                """, logger: logger)
            return try await rows.records(PairingCandidate.self)
        }
    }

    public func linkSidecar(_ sidecar: SidecarRecord) async throws {
        let rows = try Self.json([sidecar])
        return try await failing("link sidecar \(sidecar.path)") { [self] in
            try await client.query("""
                INSERT INTO cairn.sidecar (sha1, asset_sha1, kind, path, source_path, source_size, source_mtime_ns, linked_at)
                SELECT x.sha1, x.asset_sha1, x.kind, x.path, x.source_path, x.source_size, x.source_mtime_ns,
                  to_timestamp(x.linked_at)
                FROM jsonb_to_recordset(\(rows)::jsonb) AS x(sha1 text, asset_sha1 text, kind text, path text,
                  source_path text, source_size bigint, source_mtime_ns bigint, linked_at double precision)
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }

    public func sidecars(of asset: Checksum) async throws -> [SidecarRecord] {
        return try await failing("read the sidecars of \(asset)") { [self] in
            let rows = try await client.query("""
                SELECT sha1, asset_sha1, kind, path, source_path, source_size, source_mtime_ns, linked_at
                FROM cairn.sidecar WHERE asset_sha1 = \(asset.hex) ORDER BY path COLLATE "C"
                """, logger: logger)
            return try await rows.records(SidecarRecord.self)
        }
    }

    public func fillFromSidecar(_ asset: Checksum, captureDate: Date?, latitude: Double?, longitude: Double?,
                                probeJSON: String) async throws {
        return try await failing("fill the probe of \(asset) from its sidecar") { [self] in
            try await client.query("""
                UPDATE cairn.media_probe SET capture_date = COALESCE(capture_date, \(captureDate)),
                  latitude = COALESCE(latitude, \(latitude)), longitude = COALESCE(longitude, \(longitude)),
                  probe_json = \(probeJSON)
                WHERE sha1 = \(asset.hex)
                """, logger: logger)
        }
    }

    public func saveAlbum(_ album: AlbumRecord, members: [Checksum]) async throws -> AlbumChange {
        let rows = try Self.json([album]), hexes = members.map(\.hex)
        return try await failing("save album \(album.title)") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                // `xmax = 0`: the row was inserted by this statement, not updated.
                let saved = try await connection.query("""
                    INSERT INTO cairn.album AS a (source_id, folder, title, description, date, metadata_sha1, metadata_path,
                      metadata_source_path, updated_at)
                    SELECT x.source_id, x.folder, x.title, x.description, to_timestamp(x.date), x.metadata_sha1,
                      x.metadata_path, x.metadata_source_path, to_timestamp(x.updated_at)
                    FROM jsonb_to_recordset(\(rows)::jsonb) AS x(source_id bigint, folder text, title text, description text,
                      date double precision, metadata_sha1 text, metadata_path text, metadata_source_path text,
                      updated_at double precision)
                    ON CONFLICT (source_id, folder) DO UPDATE SET title = excluded.title,
                      description = excluded.description, date = excluded.date, metadata_sha1 = excluded.metadata_sha1,
                      metadata_path = excluded.metadata_path, metadata_source_path = excluded.metadata_source_path,
                      updated_at = excluded.updated_at
                    RETURNING a.id, a.xmax = 0
                    """, logger: logger)
                var change: AlbumChange?
                for try await (id, created) in saved.decode((Int64, Bool).self) {
                    change = AlbumChange(id: id, created: created, membersAdded: 0)
                }
                guard var change else { throw PostgresCatalogError.missingRow("album \(album.folder)") }
                let added = try await connection.query("""
                    INSERT INTO cairn.album_member (album_id, asset_sha1, added_at)
                    SELECT \(change.id), a.sha1, \(album.updatedAt) FROM cairn.asset a WHERE a.sha1 = ANY(\(hexes)::text[])
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger)
                for try await _ in added { change.membersAdded += 1 }
                return change
            }
        }
    }

    public func albums() async throws -> [AlbumSummary] {
        return try await failing("read the albums") { [self] in
            let rows = try await client.query("""
                SELECT \(unescaped: Self.albumColumns), (SELECT count(*) FROM cairn.album_member m JOIN cairn.asset s
                  ON s.sha1 = m.asset_sha1 WHERE m.album_id = album.id) AS members
                FROM cairn.album ORDER BY date NULLS LAST, title COLLATE "C", id
                """, logger: logger)
            var albums: [AlbumSummary] = []
            for try await row in rows {
                let members = try row.makeRandomAccess()["members"].decode(Int.self)
                albums.append(AlbumSummary(album: try AlbumRecord(from: PostgresRowDecoder(row)), members: members))
            }
            return albums
        }
    }

    public func albums(of checksum: Checksum) async throws -> [AlbumRecord] {
        try await albums(where: "id IN (SELECT album_id FROM cairn.album_member WHERE asset_sha1 = $1)",
                         checksum.hex, order: "title COLLATE \"C\", id")
    }

    public func albums(titled title: String) async throws -> [AlbumRecord] {
        // SQLite's NOCASE folds ASCII letters only; so does this.
        try await albums(where: "translate(title, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') "
                             + "= translate($1, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')",
                         title, order: "id")
    }

    private static let albumColumns = """
        id, source_id, folder, title, description, date, metadata_sha1, metadata_path, metadata_source_path, updated_at
        """

    private func albums(where condition: String, _ value: String, order: String) async throws -> [AlbumRecord] {
        return try await failing("read albums") { [self] in
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT \(Self.albumColumns) FROM cairn.album WHERE \(condition) ORDER BY \(order)
                """, binds: try Self.binds(value)), logger: logger)
            return try await rows.records(AlbumRecord.self)
        }
    }
}
