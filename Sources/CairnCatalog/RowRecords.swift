import CairnCore
import Foundation
import GRDB

// The catalog's rows as they are read: each a `Codable` record decoded by column name (GRDB's recommended
// practice), with a `Columns` enum for the columns a query names. The public records are built from them at the
// edge, where a checksum that does not parse leaves its row out rather than failing the whole read.

/// One `source_file` row: a file of a source's last snapshot, the snapshot file's one codec in either catalog.
package struct SnapshotRow: Codable, FetchableRecord, TableRecord, CatalogRecord {
    package static let databaseTableName = "source_file"
    var relativePath: String
    var device: Int64
    var inode: Int64
    var size: Int64
    var modificationTimeNanoseconds: Int64
    var sha1: String?
    var kind: String

    enum CodingKeys: String, CodingKey {
        case relativePath = "relative_path", device, inode, size, modificationTimeNanoseconds = "mtime_ns", sha1, kind
    }

    package enum Columns {
        static let sourceID = Column("source_id")
    }

    package init(_ file: SourceFile) {
        relativePath = file.relativePath
        device = Int64(bitPattern: file.fingerprint.device)
        inode = Int64(bitPattern: file.fingerprint.inode)
        size = file.fingerprint.size
        modificationTimeNanoseconds = file.fingerprint.modificationTimeNanoseconds
        sha1 = file.checksum?.hex
        kind = file.kind.rawValue
    }

    package var record: SourceFile {
        SourceFile(
            relativePath: relativePath,
            fingerprint: FileFingerprint(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode), size: size,
                                         modificationTimeNanoseconds: modificationTimeNanoseconds),
            checksum: sha1.flatMap { Checksum(hex: $0) }, kind: MediaKind(rawValue: kind) ?? .other)
    }
}

/// One `derived_file` row: the derived file's one codec, in either catalog.
package struct DerivedFileRow: Codable, FetchableRecord, TableRecord, CatalogRecord {
    package static let databaseTableName = "derived_file"
    var sha1: String
    var role: String
    var path: String
    var format: String
    var width: Int
    var height: Int
    var byteCount: Int64
    var durationSeconds: Double?
    var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case sha1, role, path, format, width, height, byteCount = "byte_count", durationSeconds = "duration_seconds",
             createdAt = "created_at"
    }

    package enum Columns {
        static let sha1 = Column(CodingKeys.sha1)
        static let role = Column(CodingKeys.role)
    }

    package var record: DerivedFileRecord? {
        guard let checksum = Checksum(hex: sha1), let role = DerivedFileRecord.Role(rawValue: role) else { return nil }
        return DerivedFileRecord(checksum: checksum, role: role, path: path, format: format, width: width, height: height,
                                 byteCount: byteCount, durationSeconds: durationSeconds, createdAt: createdAt)
    }
}

/// One `trashed_asset` row: the asset row as it was, where its files went, and when; its one codec, in either catalog.
package struct TrashedAssetRow: Codable, FetchableRecord, TableRecord, CatalogRecord {
    package static let databaseTableName = "trashed_asset"
    var sha1: String
    var trashRunID: String
    var trashedAt: Date
    var libraryPaths: String
    var kind: String
    var size: Int64
    var originalExtension: String
    var firstSourcePath: String
    var originalPath: String
    var remoteID: String?
    var importedAt: Date
    var runID: String?

    enum CodingKeys: String, CodingKey {
        case sha1, trashRunID = "trash_run_id", trashedAt = "trashed_at", libraryPaths = "library_paths", kind, size,
             originalExtension = "original_extension", firstSourcePath = "first_source_path",
             originalPath = "original_path", remoteID = "remote_id", importedAt = "imported_at", runID = "run_id"
    }

    package enum Columns {
        static let sha1 = Column(CodingKeys.sha1)
        static let trashRunID = Column(CodingKeys.trashRunID)
        static let trashedAt = Column(CodingKeys.trashedAt)
    }

    package var record: TrashedAssetRecord? {
        guard let checksum = Checksum(hex: sha1), let kind = MediaKind(rawValue: kind) else { return nil }
        let paths = (try? JSONDecoder().decode([String].self, from: Data(libraryPaths.utf8))) ?? []
        let asset = AssetRecord(
            checksum: checksum, kind: kind, size: size, originalExtension: originalExtension,
            firstSourcePath: firstSourcePath, originalPath: originalPath, remoteID: remoteID, importedAt: importedAt,
            runID: runID)
        return TrashedAssetRecord(asset: asset, trashRunID: trashRunID, trashedAt: trashedAt, libraryPaths: paths)
    }
}

/// A relative path and its checksum (`reconcile_anchor` and tables shaped like it).
package struct PathChecksumRow: Codable, FetchableRecord, CatalogRecord {
    package var relativePath: String
    package var sha1: String

    enum CodingKeys: String, CodingKey { case relativePath = "relative_path", sha1 }
}

/// One `reconcile_source` row: what reconciliation remembers about a source.
package struct ReconcileSourceRow: Codable, FetchableRecord, TableRecord, CatalogRecord {
    package static let databaseTableName = "reconcile_source"
    var hadMarker: Bool
    var firstRunDone: Bool
    var lastSyncRunID: String?
    var lastHealthyRunID: String?
    var lastHealthyFileCount: Int?
    var lastHealthyScanAt: Date?

    enum CodingKeys: String, CodingKey {
        case hadMarker = "had_marker", firstRunDone = "first_run_done", lastSyncRunID = "last_sync_run_id",
             lastHealthyRunID = "last_healthy_run_id", lastHealthyFileCount = "last_healthy_file_count",
             lastHealthyScanAt = "last_healthy_scan_at"
    }

    package enum Columns {
        static let sourceID = Column("source_id")
    }

    package var facts: ReconcileSourceFacts {
        var facts = ReconcileSourceFacts()
        facts.hadMarker = hadMarker
        facts.firstRunDone = firstRunDone
        facts.lastSyncRunID = lastSyncRunID
        facts.lastHealthyRunID = lastHealthyRunID
        facts.lastHealthyFileCount = lastHealthyFileCount
        facts.lastHealthyScanAt = lastHealthyScanAt
        return facts
    }
}

/// One `reconcile_pending` row.
package struct PendingRow: Codable, FetchableRecord, TableRecord, CatalogRecord {
    package static let databaseTableName = "reconcile_pending"
    var sourceID: Int64
    var sha1: String
    var status: String
    var confirmedAt: Date?
    var eligibleAt: Date?
    var runID: String

    package init(sourceID: Int64, sha1: String, status: String, confirmedAt: Date?, eligibleAt: Date?, runID: String) {
        self.sourceID = sourceID
        self.sha1 = sha1
        self.status = status
        self.confirmedAt = confirmedAt
        self.eligibleAt = eligibleAt
        self.runID = runID
    }

    enum CodingKeys: String, CodingKey {
        case sourceID = "source_id", sha1, status, confirmedAt = "confirmed_at", eligibleAt = "eligible_at", runID = "run_id"
    }

    package enum Columns {
        static let sourceID = Column(CodingKeys.sourceID)
    }

    package var item: PendingItem? {
        guard let checksum = Checksum(hex: sha1), let status = PendingItem.Status(rawValue: status) else { return nil }
        return PendingItem(sourceID: sourceID, checksum: checksum, status: status, confirmedAt: confirmedAt,
                           eligibleAt: eligibleAt, runID: runID)
    }
}
