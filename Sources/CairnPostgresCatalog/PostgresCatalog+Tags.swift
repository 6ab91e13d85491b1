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
            var found = Set<Checksum>()
            for try await hex in rows.decode(String.self) { if let checksum = Checksum(hex: hex) { found.insert(checksum) } }
            return found
        }
    }
}
