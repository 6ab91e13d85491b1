import CairnCore
import Foundation
import GRDB

/// An album a source describes: a folder of it, titled by the metadata file kept beside its photos.
public struct AlbumRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, CatalogRecord {
    public static let databaseTableName = "album"
    public var id: Int64?
    public var sourceID: Int64
    /// The album's folder, relative to its source root.
    public var folder: String
    /// The metadata's title, or the folder's name when that is empty.
    public var title: String
    public var description: String?
    public var date: Date?
    /// The metadata file, kept byte-identical in the library (relative to its root), and where it was found.
    public var metadataChecksum: Checksum
    public var metadataPath: String
    public var metadataSourcePath: String
    public var updatedAt: Date

    public init(sourceID: Int64, folder: String, title: String, description: String?, date: Date?,
                metadataChecksum: Checksum, metadataPath: String, metadataSourcePath: String, updatedAt: Date) {
        self.sourceID = sourceID
        self.folder = folder
        self.title = title
        self.description = description
        self.date = date
        self.metadataChecksum = metadataChecksum
        self.metadataPath = metadataPath
        self.metadataSourcePath = metadataSourcePath
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, sourceID = "source_id", folder, title, description, date, metadataChecksum = "metadata_sha1",
             metadataPath = "metadata_path", metadataSourcePath = "metadata_source_path", updatedAt = "updated_at"
    }

    public enum Columns {
        static let sourceID = Column(CodingKeys.sourceID)
        static let folder = Column(CodingKeys.folder)
        static let title = Column(CodingKeys.title)
    }
}

/// An album with the number of its members the library holds, for `cairn albums`.
public struct AlbumSummary: Sendable, Equatable {
    public var album: AlbumRecord
    public var members: Int

    public init(album: AlbumRecord, members: Int) {
        self.album = album
        self.members = members
    }
}

/// What `saveAlbum` changed.
public struct AlbumChange: Sendable, Equatable {
    public var id: Int64
    public var created: Bool
    public var membersAdded: Int

    public init(id: Int64, created: Bool, membersAdded: Int) {
        self.id = id
        self.created = created
        self.membersAdded = membersAdded
    }
}

/// Albums and their members. Membership only grows: a photo that leaves an album folder at the source stays a
/// member (the library keeps what it was told), and a member whose asset the library no longer holds is not shown.
extension SQLiteCatalog {
    /// Creates or updates the album of (`album.sourceID`, `album.folder`) and adds those of `members` the library
    /// holds as assets.
    @discardableResult
    public func saveAlbum(_ album: AlbumRecord, members: [Checksum]) async throws -> AlbumChange {
        try await write { db in
            var saved = album
            let existing = try AlbumRecord.filter(AlbumRecord.Columns.sourceID == album.sourceID
                                                  && AlbumRecord.Columns.folder == album.folder).fetchOne(db)
            if let existing {
                saved.id = existing.id
                try saved.update(db)
            } else {
                try saved.insert(db)
                saved.id = db.lastInsertedRowID
            }
            let id = saved.id!
            let insert = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO album_member (album_id, asset_sha1, added_at)
                SELECT ?, sha1, ? FROM asset WHERE sha1 = ?
                """)
            var added = 0
            for member in members {
                try insert.execute(arguments: [id, StoredDate.text(album.updatedAt), member.hex])
                added += db.changesCount
            }
            return AlbumChange(id: id, created: existing == nil, membersAdded: added)
        }
    }

    /// Every album with its members in the library, by date (undated last), then title.
    public func albums() async throws -> [AlbumSummary] {
        try await read { db in
            let counts = try AlbumCountRow.fetchAll(db, sql: """
                SELECT m.album_id, count(*) AS members FROM album_member m JOIN asset a ON a.sha1 = m.asset_sha1
                GROUP BY m.album_id
                """)
            let byAlbum = Dictionary(counts.map { ($0.albumID, $0.members) }, uniquingKeysWith: +)
            return try AlbumRecord.fetchAll(db, sql: "SELECT * FROM album ORDER BY date IS NULL, date, title, id").map {
                AlbumSummary(album: $0, members: byAlbum[$0.id ?? 0] ?? 0)
            }
        }
    }

    /// The albums `checksum` belongs to, by title.
    public func albums(of checksum: Checksum) async throws -> [AlbumRecord] {
        try await read { db in
            try AlbumRecord.fetchAll(db, sql: """
                SELECT album.* FROM album JOIN album_member m ON m.album_id = album.id
                WHERE m.asset_sha1 = ? ORDER BY album.title, album.id
                """, arguments: [checksum.hex])
        }
    }

    /// The albums titled `title` (case-insensitive; several sources or folders may share one).
    public func albums(titled title: String) async throws -> [AlbumRecord] {
        try await read { db in
            try AlbumRecord.fetchAll(db, sql: "SELECT * FROM album WHERE title = ? COLLATE NOCASE ORDER BY id",
                                     arguments: [title])
        }
    }
}

/// An album's member count, as `albums()` reads it.
private struct AlbumCountRow: Decodable, FetchableRecord, CatalogRecord {
    var albumID: Int64
    var members: Int

    enum CodingKeys: String, CodingKey {
        case albumID = "album_id", members
    }
}
