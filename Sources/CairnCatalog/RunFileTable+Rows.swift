import CairnCore
import Foundation
import GRDB

// The run tables' query results as records, every column read by its name through `CodingKeys`: the SQL names its
// columns once, and a renamed or missing one fails at the read that needs it.

/// A walk row of `temp.run_file`: its `id` and the columns of a snapshot row (`path AS relative_path`, `device`,
/// `inode`, `size`, `mtime_ns`, `kind`, `sha1`).
package struct RunFileRow: Decodable, FetchableRecord, CatalogRecord {
    package var id: Int64
    package var snapshot: SnapshotRow

    enum CodingKeys: String, CodingKey { case id }

    package init(from decoder: any Decoder) throws {
        id = try decoder.container(keyedBy: CodingKeys.self).decode(Int64.self, forKey: .id)
        snapshot = try SnapshotRow(from: decoder)
    }

    package var file: RunFile { RunFile(id: id, record: snapshot.record) }
}

/// A sidecar row of `temp.run_sidecar`: its `folder` and the columns of a snapshot row.
package struct RunSidecarRow: Decodable, FetchableRecord, CatalogRecord {
    package var folder: String
    package var snapshot: SnapshotRow

    enum CodingKeys: String, CodingKey { case folder }

    package init(from decoder: any Decoder) throws {
        folder = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .folder)
        snapshot = try SnapshotRow(from: decoder)
    }

    package var sidecar: RunSidecar { RunSidecar(folder: folder, record: snapshot.record) }
}

/// The walk matched against the snapshot (`matchSnapshot`).
package struct SnapshotMatchRow: Decodable, FetchableRecord, CatalogRecord {
    package var files: Int
    package var bytes: Double
    package var toHash: Int
    package var bytesToHash: Double
    package var known: Int

    enum CodingKeys: String, CodingKey { case files, bytes, toHash = "to_hash", bytesToHash = "bytes_to_hash", known }
}

/// The content of the walk, counted (`classify`).
package struct ContentCountsRow: Decodable, FetchableRecord, CatalogRecord {
    package var newContent: Int
    package var newBytes: Double
    package var duplicates: Double
    package var unchanged: Double

    enum CodingKeys: String, CodingKey { case newContent = "new_content", newBytes = "new_bytes", duplicates, unchanged }
}

/// A handled item's columns (`RunFileTable.itemColumns`): its state through `ItemState`'s codec, null when the
/// row joins no handled item.
package struct HandledItemColumns: Decodable {
    package var state: ItemState?
    package var isDuplicate: Bool
    package var leftUnfinished: Bool

    enum CodingKeys: String, CodingKey { case state, duplicate, leftUnfinished = "left_unfinished" }

    package init(from decoder: any Decoder) throws {
        let columns = try decoder.container(keyedBy: CodingKeys.self)
        state = try columns.decodeNil(forKey: .state) ? nil : ItemState(from: decoder)
        isDuplicate = try columns.decodeIfPresent(Bool.self, forKey: .duplicate) ?? false
        leftUnfinished = try columns.decodeIfPresent(Bool.self, forKey: .leftUnfinished) ?? false
    }

    /// What became of the item; nil when the row joins none.
    package var outcomeIfHandled: FileOutcome? {
        state.map { FileOutcome(state: $0, isDuplicate: isDuplicate, leftUnfinished: leftUnfinished) }
    }

    /// What became of the item (unfinished at the transfer when the row joins none).
    package var outcome: FileOutcome { outcomeIfHandled ?? .unfinished(resumeAt: .transfer) }
}

/// Handled items, grouped (`outcomeCounts`: `files`) or one each (`relative_path`, `sha1`).
package struct HandledItemsRow: Decodable, FetchableRecord, CatalogRecord {
    package var item: HandledItemColumns
    package var files: Int
    package var relativePath: String?
    package var checksum: Checksum?

    enum CodingKeys: String, CodingKey { case files, relativePath = "relative_path", sha1 }

    package init(from decoder: any Decoder) throws {
        let columns = try decoder.container(keyedBy: CodingKeys.self)
        item = try HandledItemColumns(from: decoder)
        files = try columns.decodeIfPresent(Int.self, forKey: .files) ?? 1
        relativePath = try columns.decodeIfPresent(String.self, forKey: .relativePath)
        checksum = try columns.decodeIfPresent(Checksum.self, forKey: .sha1)
    }

    /// The item's failure as a run's summary lists it; nil unless it failed.
    package var failure: ImportFailure? {
        guard let failure = item.state?.failure else { return nil }
        return ImportFailure(relativePath: relativePath ?? "", phase: FailurePhase(failure.phase),
                             reason: failure.reason, retryable: failure.retryable)
    }
}

/// Hashing failures and files left unread, counted (`outcomeCounts`).
package struct WalkCountsRow: Decodable, FetchableRecord, CatalogRecord {
    package var failed: Int
    package var unread: Int
}

/// The files the pipeline did not handle, counted (`outcomeCounts`).
package struct UnhandledCountsRow: Decodable, FetchableRecord, CatalogRecord {
    package var duplicate: Double
    package var unchanged: Double
    package var unfinished: Int
}

/// A walk file with its hashing, its content's group and its handled item (`outcomes`).
package struct WalkOutcomeRow: Decodable, FetchableRecord, CatalogRecord {
    package var path: String
    package var checksum: Checksum?
    package var hashed: Bool
    package var hashFailure: FailureReason?
    package var isFirst: Bool
    package var inLibrary: Bool
    package var item: HandledItemColumns

    enum CodingKeys: String, CodingKey {
        case path, sha1 = "walk_sha1", hashed, failed, failureOperation = "failure_operation"
        case failureReason = "failure_reason", failureCategory = "failure_category", isFirst = "is_first", inLibrary = "in_library"
    }

    package init(from decoder: any Decoder) throws {
        let columns = try decoder.container(keyedBy: CodingKeys.self)
        path = try columns.decode(String.self, forKey: .path)
        checksum = try columns.decodeIfPresent(Checksum.self, forKey: .sha1)
        hashed = try columns.decode(Bool.self, forKey: .hashed)
        hashFailure = try columns.decode(Bool.self, forKey: .failed)
            ? FailureReason(operation: try columns.decodeIfPresent(String.self, forKey: .failureOperation),
                            try columns.decodeIfPresent(String.self, forKey: .failureReason) ?? "",
                            category: FailureCategory(stored: try columns.decodeIfPresent(String.self, forKey: .failureCategory)))
            : nil
        isFirst = try columns.decodeIfPresent(Bool.self, forKey: .isFirst) ?? false
        inLibrary = try columns.decodeIfPresent(Bool.self, forKey: .inLibrary) ?? false
        item = try HandledItemColumns(from: decoder)
    }

    /// The file's line: failed or left unread by hashing, the outcome of its handled content (first file only),
    /// new content the run never reached, or held already (hashed this run: a duplicate; cached: unchanged).
    package var entry: FileOutcomeEntry {
        let outcome: FileOutcome
        if let hashFailure {
            outcome = .failed(phase: .hashing, reason: hashFailure)
        } else if checksum == nil {
            outcome = .unfinished(resumeAt: .hashing)
        } else if let handled = item.outcomeIfHandled {
            outcome = handled
        } else if isFirst && !inLibrary {
            outcome = .unfinished(resumeAt: .transfer)
        } else {
            outcome = hashed ? .duplicate : .unchanged
        }
        return FileOutcomeEntry(path: path, checksum: checksum, outcome: outcome)
    }
}

/// Content observed at a source and absent from this walk (`absentContent`).
package struct AbsentContentRow: Decodable, FetchableRecord, CatalogRecord {
    package var sha1: String
    package var confirmedAt: Date?
    package var approved: Bool

    enum CodingKeys: String, CodingKey { case sha1, confirmedAt = "confirmed_at", approved }

    /// The content with its stamp as it stands after this run: `stampedNow` were stamped by this run, at `now`.
    package func content(stampedNow: Set<Checksum>, at now: Date) -> AbsentContent? {
        guard let checksum = Checksum(hex: sha1) else { return nil }
        return AbsentContent(checksum: checksum, confirmedAt: confirmedAt ?? (stampedNow.contains(checksum) ? now : nil),
                             approved: approved)
    }
}

/// Items and bytes of one kind (`SQLiteCatalog.assetTally`).
struct KindTallyRow: Decodable, FetchableRecord, CatalogRecord {
    var kind: String
    var items: Int
    var bytes: Int64
}
