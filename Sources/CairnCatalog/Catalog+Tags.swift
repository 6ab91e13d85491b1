import CairnCore
import Foundation
import GRDB

extension Catalog {
    /// Tags `assets` with each of `tags`; a tag an asset has already keeps its first date.
    public func tag(_ assets: [Checksum], with tags: [String], at date: Date) throws {
        guard !assets.isEmpty, !tags.isEmpty else { return }
        try pool.write { db in
            let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO asset_tag (sha1, tag, tagged_at) VALUES (?, ?, ?)")
            for asset in assets {
                for tag in tags { try insert.execute(arguments: [asset.hex, tag, date]) }
            }
        }
    }

    /// The tags of an asset, by name.
    public func tags(of checksum: Checksum) throws -> [String] {
        try pool.read { db in
            try String.fetchAll(db, sql: "SELECT tag FROM asset_tag WHERE sha1 = ? ORDER BY tag", arguments: [checksum.hex])
        }
    }

    /// The assets tagged `tag` (case-insensitive for ASCII letters, as album titles are).
    public func assets(taggedWith tag: String) throws -> Set<Checksum> {
        try pool.read { db in
            Set(try Checksum.fetchAll(db, sql: "SELECT sha1 FROM asset_tag WHERE tag = ? COLLATE NOCASE", arguments: [tag]))
        }
    }
}

extension SQLiteCatalog {
    public func tag(_ assets: [Checksum], with tags: [String], at date: Date) async throws {
        try await BlockingPool.run { [catalog] in try catalog.tag(assets, with: tags, at: date) }
    }

    public func tags(of checksum: Checksum) async throws -> [String] {
        try await BlockingPool.run { [catalog] in try catalog.tags(of: checksum) }
    }

    public func assets(taggedWith tag: String) async throws -> Set<Checksum> {
        try await BlockingPool.run { [catalog] in try catalog.assets(taggedWith: tag) }
    }
}
