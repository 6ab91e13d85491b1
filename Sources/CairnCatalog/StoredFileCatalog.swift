import CairnCore
import Foundation
import GRDB

/// A file the catalog says the library holds, as `cairn check` compares it with the store.
public struct CatalogFile: Sendable, Equatable {
    /// What the file is to its asset.
    public enum Role: String, Sendable, Equatable {
        case original, thumbnail, preview, clip, sidecar
        /// A Takeout album's metadata file (kept beside the sidecars).
        case albumMetadata = "album-metadata"
    }

    /// Relative to the library (or the store's prefix): `originals/ab/<sha1>.jpg`.
    public var path: String
    /// Its size, when the catalog knows it.
    public var size: Int64?
    public var role: Role
    /// The content the file is named by: the asset's, for its original and derived files; the sidecar's own.
    public var checksum: Checksum

    public init(path: String, size: Int64?, role: Role, checksum: Checksum) {
        self.path = path
        self.size = size
        self.role = role
        self.checksum = checksum
    }
}

/// The top folders of a library whose files the catalog names.
public enum StoredFolder: String, Sendable, CaseIterable {
    case originals, derived, sidecars
}

/// What `cairn check` asks of a catalog: the files it names, a shard at a time, so a check of millions of files
/// holds a few thousand rows at once.
public protocol StoredFileCatalog: Sendable {
    /// The files under `folder` of the assets in the library (the trash's are not), whose naming content's checksum
    /// starts with `shard` (two hex digits), in the bytewise order of their paths; a path named twice (a sidecar of
    /// two assets) once. A preview that is its own original is the original's, under `originals/`.
    func storedFiles(in folder: StoredFolder, shard: String) async throws -> [CatalogFile]
}

extension StoredFileCatalog {
    /// `shard`'s checksums are those from `shard` up to, not including, the returned bound (nil after `ff`).
    public static func shardBound(after shard: String) -> String? {
        guard let value = Int(shard, radix: 16), value < 255 else { return nil }
        let next = String(value + 1, radix: 16)
        return next.count == 1 ? "0" + next : next
    }

    /// The files' rows made values, sorted bytewise, each path once.
    package static func ordered(_ files: [CatalogFile]) -> [CatalogFile] {
        var seen = Set<String>()
        return files.sorted { PathOrder.precedes($0.path, $1.path) }.filter { seen.insert($0.path).inserted }
    }
}

extension SQLiteCatalog {
    public func storedFiles(in folder: StoredFolder, shard: String) async throws -> [CatalogFile] {
        let upper = SQLiteCatalog.shardBound(after: shard) ?? "g"
        let sql: String
        switch folder {
        case .originals:
            sql = """
                SELECT original_path AS path, size, '\(CatalogFile.Role.original.rawValue)' AS role, sha1 FROM asset
                WHERE sha1 >= ?1 AND sha1 < ?2 AND original_path <> ''
                """
        case .derived:
            sql = """
                SELECT d.path, d.byte_count AS size, d.role, d.sha1 FROM derived_file d JOIN asset a ON a.sha1 = d.sha1
                WHERE d.sha1 >= ?1 AND d.sha1 < ?2 AND d.path <> a.original_path
                """
        case .sidecars:
            sql = """
                SELECT s.path, max(s.source_size) AS size, '\(CatalogFile.Role.sidecar.rawValue)' AS role, s.sha1 FROM sidecar s
                WHERE s.sha1 >= ?1 AND s.sha1 < ?2 AND EXISTS (SELECT 1 FROM asset a WHERE a.sha1 = s.asset_sha1)
                GROUP BY s.path, s.sha1
                UNION ALL
                SELECT metadata_path, NULL, '\(CatalogFile.Role.albumMetadata.rawValue)', metadata_sha1 FROM album
                WHERE metadata_sha1 >= ?1 AND metadata_sha1 < ?2
                """
        }
        return try await read { db in
            Self.ordered(try StoredFileRow.fetchAll(db, sql: sql, arguments: [shard, upper]).compactMap(\.file))
        }
    }
}

extension SQLiteCatalog: StoredFileCatalog {}

/// One row of `storedFiles(in:shard:)`, in either catalog: a file's path, known size, role and naming checksum.
package struct StoredFileRow: Decodable, FetchableRecord {
    var path: String
    var size: Int64?
    var role: String
    var sha1: String

    package var file: CatalogFile? {
        guard let role = CatalogFile.Role(rawValue: role), let checksum = Checksum(hex: sha1) else { return nil }
        return CatalogFile(path: path, size: size.flatMap { $0 > 0 ? $0 : nil }, role: role, checksum: checksum)
    }
}
