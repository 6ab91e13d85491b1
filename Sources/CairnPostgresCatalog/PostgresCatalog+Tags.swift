import CairnCatalog
import CairnCore
import Foundation
import PostgresNIO

/// Asset tags in PostgreSQL, as `AssetLinkCatalog` describes them.
extension PostgresCatalog {
    public func tag(_ assets: [Checksum], with tags: [String], at date: Date) async throws {
        guard !assets.isEmpty, !tags.isEmpty else { return }
        let hexes = assets.map(\.hex)
        return try await failing("tag \(assets.count) assets") { [self] in
            try await client.query("""
                INSERT INTO cairn.asset_tag (sha1, tag, tagged_at)
                SELECT a, t, \(date) FROM unnest(\(hexes)::text[]) AS a, unnest(\(tags)::text[]) AS t
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }

    public func tags(of checksum: Checksum) async throws -> [String] {
        return try await failing("read the tags of \(checksum)") { [self] in
            let rows = try await client.query("""
                SELECT tag FROM cairn.asset_tag WHERE sha1 = \(checksum.hex) ORDER BY tag COLLATE "C"
                """, logger: logger)
            var tags: [String] = []
            for try await tag in rows.decode(String.self) { tags.append(tag) }
            return tags
        }
    }

    public func assets(taggedWith tag: String) async throws -> Set<Checksum> {
        return try await failing("read the assets tagged \(tag)") { [self] in
            // SQLite's NOCASE folds ASCII letters only; so does this.
            let rows = try await client.query("""
                SELECT sha1 FROM cairn.asset_tag
                WHERE translate(tag, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
                  = translate(\(tag), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
                """, logger: logger)
            return Set(try await rows.checksums())
        }
    }
}

/// Trashed photos' Takeout JSONs in PostgreSQL, as `AssetLinkCatalog` describes them.
extension PostgresCatalog {
    public func trashedTakeoutJSONs(atSourcePaths paths: [String]) async throws -> [TrashedTakeoutJSON] {
        guard !paths.isEmpty else { return [] }
        return try await failing("read \(paths.count) trashed photos' Takeout JSONs") { [self] in
            let rows = try await client.query("""
                SELECT source_path, source_size, source_mtime_ns, title, taken FROM cairn.takeout_trashed
                WHERE source_path = ANY(\(paths)::text[])
                """, logger: logger)
            return try await rows.records(TrashedTakeoutJSON.self)
        }
    }

    public func saveTrashedTakeoutJSONs(_ jsons: [TrashedTakeoutJSON]) async throws {
        guard !jsons.isEmpty else { return }
        let rows = try Self.json(jsons)
        return try await failing("keep \(jsons.count) trashed photos' Takeout JSONs") { [self] in
            try await client.query("""
                INSERT INTO cairn.takeout_trashed (source_path, source_size, source_mtime_ns, title, taken)
                SELECT x.source_path, x.source_size, x.source_mtime_ns, x.title, to_timestamp(x.taken)
                FROM jsonb_to_recordset(\(rows)::jsonb)
                  AS x(source_path text, source_size bigint, source_mtime_ns bigint, title text, taken double precision)
                ON CONFLICT (source_path) DO UPDATE SET source_size = excluded.source_size,
                  source_mtime_ns = excluded.source_mtime_ns, title = excluded.title, taken = excluded.taken
                """, logger: logger)
        }
    }
}
