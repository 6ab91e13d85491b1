import CairnCore
import Foundation
import GRDB

/// What probing an original found, as columns plus the whole probe as JSON.
public struct MediaProbeRecord: Sendable, Equatable, Codable, FetchableRecord, PersistableRecord, CatalogRecord {
    public static let databaseTableName = "media_probe"
    public var checksum: Checksum
    public var container: String
    /// As displayed (orientation applied).
    public var width: Int?
    public var height: Int?
    public var durationSeconds: Double?
    public var captureDate: Date?
    public var cameraMake: String?
    public var cameraModel: String?
    public var latitude: Double?
    public var longitude: Double?
    public var altitude: Double?
    /// The first video stream's codec.
    public var codec: String?
    public var probeJSON: String
    public var probedAt: Date

    enum CodingKeys: String, CodingKey {
        case checksum = "sha1", container, width, height, durationSeconds = "duration_seconds",
             captureDate = "capture_date", cameraMake = "camera_make", cameraModel = "camera_model", latitude,
             longitude, altitude, codec, probeJSON = "probe_json", probedAt = "probed_at"
    }

    public init(checksum: Checksum, container: String, width: Int?, height: Int?, durationSeconds: Double?,
                captureDate: Date?, cameraMake: String?, cameraModel: String?, latitude: Double?, longitude: Double?,
                altitude: Double?, codec: String?, probeJSON: String, probedAt: Date) {
        self.checksum = checksum
        self.container = container
        self.width = width
        self.height = height
        self.durationSeconds = durationSeconds
        self.captureDate = captureDate
        self.cameraMake = cameraMake
        self.cameraModel = cameraModel
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.codec = codec
        self.probeJSON = probeJSON
        self.probedAt = probedAt
    }
}

/// A file made from an original: its thumbnail, preview or clip.
public struct DerivedFileRecord: Sendable, Equatable, Codable {
    public enum Role: String, Sendable, CaseIterable, Codable {
        case thumbnail, preview, clip
    }

    public var checksum: Checksum
    public var role: Role
    /// Relative to the library root. A preview's may be the original's own path (a small upright sRGB JPEG is its
    /// own preview): never delete a file because a derived row names it.
    public var path: String
    /// `webp`, `jpeg`, or the clip's codec.
    public var format: String
    public var width: Int
    public var height: Int
    public var byteCount: Int64
    public var durationSeconds: Double?
    public var createdAt: Date

    public init(checksum: Checksum, role: Role, path: String, format: String, width: Int, height: Int,
                byteCount: Int64, durationSeconds: Double? = nil, createdAt: Date) {
        self.checksum = checksum
        self.role = role
        self.path = path
        self.format = format
        self.width = width
        self.height = height
        self.byteCount = byteCount
        self.durationSeconds = durationSeconds
        self.createdAt = createdAt
    }
}

/// Probes, derived files and kept-without-preview reasons: what the media lanes learn and make of an original.
extension SQLiteCatalog {
    /// The assets first: a probe, a derived file or a kept-without-preview reason may be about one of them.
    static func saveStageRows(_ rows: StageRows, in db: Database) throws {
        for asset in rows.assets { try asset.insert(db, onConflict: .ignore) }
        for probe in rows.probes { try saveMediaProbe(probe, in: db) }
        try saveDerivedFiles(rows.derivedFiles, in: db)
        for kept in rows.keptWithoutPreview {
            try db.execute(sql: "UPDATE asset SET no_preview_reason = ? WHERE sha1 = ?",
                           arguments: [kept.reason, kept.checksum.hex])
        }
    }

    static func saveMediaProbe(_ probe: MediaProbeRecord, in db: Database) throws {
        try probe.insert(db, onConflict: .replace)
    }

    public func mediaProbe(_ checksum: Checksum) async throws -> MediaProbeRecord? {
        try await read { db in
            try MediaProbeRecord.filter(Column(MediaProbeRecord.CodingKeys.checksum) == checksum.hex).fetchOne(db)
        }
    }

    /// The probes of a run's assets whose JSON holds `marker` (a sidecar's source, such as "takeout-json"): the
    /// few a destination must be told about, found in SQL instead of by reading every probe of the run.
    public func mediaProbes(ofRun runID: String, mentioning marker: String) async throws -> [MediaProbeRecord] {
        try await read { db in
            try MediaProbeRecord.fetchAll(db, sql: """
                SELECT p.* FROM media_probe p JOIN asset a ON a.sha1 = p.sha1
                WHERE a.run_id = ? AND instr(p.probe_json, ?) > 0
                """, arguments: [runID, marker])
        }
    }

    static func saveDerivedFiles(_ files: [DerivedFileRecord], in db: Database) throws {
        guard !files.isEmpty else { return }
        let insert = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO derived_file (sha1, role, path, format, width, height, byte_count,
                duration_seconds, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for file in files {
            try insert.execute(arguments: [
                file.checksum.hex, file.role.rawValue, file.path, file.format, file.width, file.height,
                file.byteCount, file.durationSeconds, StoredDate.text(file.createdAt),
            ])
        }
    }

    /// Derived files of one original, by role.
    public func derivedFiles(of checksum: Checksum) async throws -> [DerivedFileRecord] {
        try await read { db in
            try DerivedFileRow.filter(DerivedFileRow.Columns.sha1 == checksum.hex).order(DerivedFileRow.Columns.role)
                .fetchAll(db).compactMap(\.record)
        }
    }
}
