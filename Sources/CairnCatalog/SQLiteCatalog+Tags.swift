import CairnCore
import Foundation
import GRDB

extension SQLiteCatalog {
    /// Tags `assets` with each of `tags`; a tag an asset has already keeps its first date.
    public func tag(_ assets: [Checksum], with tags: [String], at date: Date) async throws {
        guard !assets.isEmpty, !tags.isEmpty else { return }
        try await write { db in
            let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO asset_tag (sha1, tag, tagged_at) VALUES (?, ?, ?)")
            for asset in assets {
                for tag in tags { try insert.execute(arguments: [asset.hex, tag, date]) }
            }
        }
    }

    /// The tags of an asset, by name.
    public func tags(of checksum: Checksum) async throws -> [String] {
        try await read { db in
            try String.fetchAll(db, sql: "SELECT tag FROM asset_tag WHERE sha1 = ? ORDER BY tag", arguments: [checksum.hex])
        }
    }

    /// The assets tagged `tag` (case-insensitive for ASCII letters, as album titles are).
    public func assets(taggedWith tag: String) async throws -> Set<Checksum> {
        try await read { db in
            Set(try Checksum.fetchAll(db, sql: "SELECT sha1 FROM asset_tag WHERE tag = ? COLLATE NOCASE", arguments: [tag]))
        }
    }
}
