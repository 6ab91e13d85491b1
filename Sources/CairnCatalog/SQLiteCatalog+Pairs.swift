import CairnCore
import Foundation
import GRDB

/// A still and its motion part, paired once and kept as one unit.
public struct AssetPairRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, CatalogRecord {
    public static let databaseTableName = "asset_pair"
    public var still: Checksum
    public var motion: Checksum
    /// `content identifier` (Apple's, in both files) or `name and time` (same name, same folder, within 2 s).
    public var basis: String
    public var pairedAt: Date
    /// When the destination linked the two as one (Immich: the still names its movie); nil until it has, so a link
    /// that failed is tried again by the next run.
    public var linkedAt: Date?

    public init(still: Checksum, motion: Checksum, basis: String, pairedAt: Date, linkedAt: Date? = nil) {
        self.still = still
        self.motion = motion
        self.basis = basis
        self.pairedAt = pairedAt
        self.linkedAt = linkedAt
    }

    enum CodingKeys: String, CodingKey {
        case still = "still_sha1", motion = "motion_sha1", basis, pairedAt = "paired_at", linkedAt = "linked_at"
    }
}

/// An asset not yet paired, with what pairing looks at.
public struct PairingCandidate: Decodable, Sendable, Equatable, FetchableRecord, CatalogRecord {
    public var checksum: Checksum
    public var kind: MediaKind
    public var firstSourcePath: String
    public var contentIdentifier: String?
    public var durationSeconds: Double?
    public var captureDate: Date?

    enum CodingKeys: String, CodingKey {
        case checksum = "sha1", kind, firstSourcePath = "first_source_path", contentIdentifier = "content_identifier",
             durationSeconds = "duration_seconds", captureDate = "capture_date"
    }
}

extension SQLiteCatalog {
    /// Up to `limit` probed assets in no pair yet after `checksum`, by checksum: stills and videos, with their
    /// content identifier (from the stored probe). A page at a time: a library holds millions, and the caller
    /// keeps the few that can pair.
    public func unpairedAssets(after checksum: Checksum?, limit: Int) async throws -> [PairingCandidate] {
        try await read { db in
            try PairingCandidate.fetchAll(db, sql: """
                SELECT asset.sha1, asset.kind, asset.first_source_path,
                       json_extract(media_probe.probe_json, '$.contentIdentifier') AS content_identifier,
                       media_probe.duration_seconds, media_probe.capture_date
                FROM asset JOIN media_probe ON media_probe.sha1 = asset.sha1
                WHERE asset.sha1 > ? AND asset.kind IN ('photo', 'video')
                  AND asset.sha1 NOT IN (SELECT still_sha1 FROM asset_pair)
                  AND asset.sha1 NOT IN (SELECT motion_sha1 FROM asset_pair)
                ORDER BY asset.sha1 LIMIT ?
                """, arguments: [checksum?.hex ?? "", limit])
        }
    }

    public func savePairs(_ pairs: [AssetPairRecord]) async throws {
        guard !pairs.isEmpty else { return }
        try await write { db in for pair in pairs { try pair.insert(db, onConflict: .ignore) } }
    }

    /// The pair `checksum` belongs to, as still or motion.
    public func pair(of checksum: Checksum) async throws -> AssetPairRecord? {
        try await read { db in
            try AssetPairRecord.fetchOne(db, sql: "SELECT * FROM asset_pair WHERE still_sha1 = ? OR motion_sha1 = ?",
                                         arguments: [checksum.hex, checksum.hex])
        }
    }

    public func allPairs() async throws -> [AssetPairRecord] {
        try await read { db in try AssetPairRecord.order(Column("still_sha1")).fetchAll(db) }
    }

    /// The pairs the destination has not linked yet, by still.
    public func pairsAwaitingLink() async throws -> [AssetPairRecord] {
        try await read { db in
            try AssetPairRecord.fetchAll(db, sql: "SELECT * FROM asset_pair WHERE linked_at IS NULL ORDER BY still_sha1")
        }
    }

    /// The destination linked the pairs of these stills.
    public func markPairsLinked(_ stills: [Checksum], at date: Date) async throws {
        guard !stills.isEmpty else { return }
        try await write { db in
            let mark = try db.cachedStatement(sql: "UPDATE asset_pair SET linked_at = ? WHERE still_sha1 = ?")
            for still in stills { try mark.execute(arguments: [StoredDate.text(date), still.hex]) }
        }
    }

    /// Which of `checksums` some source held at its last scan.
    public func heldByAnySource(_ checksums: Set<Checksum>) async throws -> Set<Checksum> {
        guard !checksums.isEmpty else { return [] }
        return try await read { db in
            var held = Set<Checksum>()
            for checksum in checksums
            where try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM source_file WHERE sha1 = ?)", arguments: [checksum.hex]) == true {
                held.insert(checksum)
            }
            return held
        }
    }
}
