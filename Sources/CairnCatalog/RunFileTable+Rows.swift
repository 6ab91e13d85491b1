import CairnCore
import Foundation
import GRDB

// The run tables' query results as records, every column read by its name through `CodingKeys`: the SQL names its
// columns once, and a renamed or missing one fails at the read that needs it.

/// A walk row of `temp.run_file`: its `id` and the columns of a snapshot row (`path AS relative_path`, `device`,
/// `inode`, `size`, `mtime_ns`, `kind`, `sha1`).
struct RunFileRow: Decodable, FetchableRecord {
    var id: Int64
    var snapshot: SnapshotRow

    enum CodingKeys: String, CodingKey { case id }

    init(from decoder: any Decoder) throws {
        id = try decoder.container(keyedBy: CodingKeys.self).decode(Int64.self, forKey: .id)
        snapshot = try SnapshotRow(from: decoder)
    }

    var file: RunFileTable.File { RunFileTable.File(id: id, record: snapshot.record) }
}

/// A sidecar row of `temp.run_sidecar`: its `folder` and the columns of a snapshot row.
struct RunSidecarRow: Decodable, FetchableRecord {
    var folder: String
    var snapshot: SnapshotRow

    enum CodingKeys: String, CodingKey { case folder }

    init(from decoder: any Decoder) throws {
        folder = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .folder)
        snapshot = try SnapshotRow(from: decoder)
    }
}

/// The walk matched against the snapshot (`matchSnapshot`).
struct SnapshotMatchRow: Decodable, FetchableRecord {
    var files: Int
    var bytes: Double
    var toHash: Int
    var bytesToHash: Double
    var known: Int

    enum CodingKeys: String, CodingKey { case files, bytes, toHash = "to_hash", bytesToHash = "bytes_to_hash", known }
}

/// The content of the walk, counted (`classify`).
struct ContentCountsRow: Decodable, FetchableRecord {
    var newContent: Int
    var newBytes: Double
    var duplicates: Double
    var unchanged: Double

    enum CodingKeys: String, CodingKey { case newContent = "new_content", newBytes = "new_bytes", duplicates, unchanged }
}

/// How many files ended one way (`outcomeCounts`).
struct OutcomeCountRow: Decodable, FetchableRecord {
    var outcome: String
    var files: Int
}

/// The files the pipeline did not handle, counted (`outcomeCounts`).
struct UnhandledCountsRow: Decodable, FetchableRecord {
    var duplicate: Double
    var unchanged: Double
    var unfinished: Int
}

/// A stored outcome's columns, named apart from the walk's own `sha1` and `path` (`RunFileTable.outcomeColumns`).
struct OutcomeColumns: Decodable, FetchableRecord {
    var sha1: String?
    var path: String?
    var outcome: String?
    var phase: String?
    var operation: String?
    var reason: String?

    enum CodingKeys: String, CodingKey {
        case sha1 = "outcome_sha1", path = "outcome_path", outcome, phase = "outcome_phase"
        case operation = "outcome_operation", reason = "outcome_reason"
    }

    /// The outcome, nil when the row has none.
    var contentOutcome: RunFileTable.ContentOutcome? {
        guard let sha1, let checksum = Checksum(hex: sha1), let path, let outcome else { return nil }
        return RunFileTable.ContentOutcome(checksum: checksum, path: path, outcome: outcome, phase: phase,
                                           reason: reason.map { FailureReason(operation: operation, $0) })
    }
}

/// A walk file with its content's group and outcome (`forEachFileLine`).
struct FileLineRow: Decodable, FetchableRecord {
    var path: String
    var sha1: String?
    var hashed: Bool
    var failed: Bool
    var isFirst: Bool?
    var inLibrary: Bool?
    var stored: OutcomeColumns

    enum CodingKeys: String, CodingKey { case path, sha1, hashed, failed, isFirst = "is_first", inLibrary = "in_library" }

    init(from decoder: any Decoder) throws {
        let columns = try decoder.container(keyedBy: CodingKeys.self)
        path = try columns.decode(String.self, forKey: .path)
        sha1 = try columns.decodeIfPresent(String.self, forKey: .sha1)
        hashed = try columns.decode(Bool.self, forKey: .hashed)
        failed = try columns.decode(Bool.self, forKey: .failed)
        isFirst = try columns.decodeIfPresent(Bool.self, forKey: .isFirst)
        inLibrary = try columns.decodeIfPresent(Bool.self, forKey: .inLibrary)
        stored = try OutcomeColumns(from: decoder)
    }

    var line: RunFileTable.FileLine {
        RunFileTable.FileLine(path: path, checksum: sha1.flatMap { Checksum(hex: $0) }, hashedThisRun: hashed,
                              hashFailed: failed, isFirst: isFirst ?? false, inLibrary: inLibrary ?? false,
                              outcome: stored.contentOutcome)
    }
}

/// Content observed at a source and absent from this walk (`absentContent`).
struct AbsentContentRow: Decodable, FetchableRecord {
    var sha1: String
    var confirmedAt: Date?
    var approved: Bool

    enum CodingKeys: String, CodingKey { case sha1, confirmedAt = "confirmed_at", approved }
}

/// Items and bytes of one kind (`Catalog.assetTally`).
struct KindTallyRow: Decodable, FetchableRecord {
    var kind: String
    var items: Int
    var bytes: Int64
}
