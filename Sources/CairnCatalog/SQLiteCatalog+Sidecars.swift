import CairnCore
import Foundation
import GRDB

/// A sidecar file linked to the asset it describes.
public struct SidecarRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, CatalogRecord {
    public static let databaseTableName = "sidecar"
    public var checksum: Checksum
    public var asset: Checksum
    /// `xmp`, `aae` or `takeout`.
    public var kind: String
    /// Where the bytes are kept, relative to the library root.
    public var path: String
    /// Where it was found, relative to its source root, and that file's size and modification time then: a
    /// later run that finds the same file unchanged has nothing to read.
    public var sourcePath: String
    public var sourceSize: Int64
    public var sourceModificationTimeNanoseconds: Int64
    public var linkedAt: Date

    public init(checksum: Checksum, asset: Checksum, kind: String, path: String, sourcePath: String,
                sourceSize: Int64 = 0, sourceModificationTimeNanoseconds: Int64 = 0, linkedAt: Date) {
        self.sourceSize = sourceSize
        self.sourceModificationTimeNanoseconds = sourceModificationTimeNanoseconds
        self.checksum = checksum
        self.asset = asset
        self.kind = kind
        self.path = path
        self.sourcePath = sourcePath
        self.linkedAt = linkedAt
    }

    enum CodingKeys: String, CodingKey {
        case checksum = "sha1", asset = "asset_sha1", kind, path, sourcePath = "source_path", sourceSize = "source_size",
             sourceModificationTimeNanoseconds = "source_mtime_ns", linkedAt = "linked_at"
    }
}

extension SQLiteCatalog {
    /// Links a stored sidecar to its asset; linking the same bytes to the same asset again changes nothing.
    public func linkSidecar(_ sidecar: SidecarRecord) async throws {
        try await write { db in try sidecar.insert(db, onConflict: .ignore) }
    }

    public func sidecars(of asset: Checksum) async throws -> [SidecarRecord] {
        try await read { db in
            try SidecarRecord.fetchAll(db, sql: "SELECT * FROM sidecar WHERE asset_sha1 = ? ORDER BY path", arguments: [asset.hex])
        }
    }

    /// Fills a probed asset's capture time and position from a sidecar where the file itself had none; the probe
    /// JSON is rewritten by the caller (`probeJSON`), so `cairn asset` shows where each value came from.
    public func fillFromSidecar(_ asset: Checksum, captureDate: Date?, latitude: Double?, longitude: Double?,
                                probeJSON: String) async throws {
        try await write { db in
            try db.execute(sql: """
                UPDATE media_probe SET capture_date = COALESCE(capture_date, ?), latitude = COALESCE(latitude, ?),
                    longitude = COALESCE(longitude, ?), probe_json = ? WHERE sha1 = ?
                """, arguments: [captureDate.map(StoredDate.text), latitude, longitude, probeJSON, asset.hex])
        }
    }
}
