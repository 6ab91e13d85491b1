import CairnCore
import Foundation
import GRDB

/// What became, at the destination, of content cairn brought there and still counts as there.
public enum DriftState: String, Sendable, Hashable, CaseIterable {
    /// In the destination's own trash (a person deleted it there): restorable there.
    case trashed
    /// Gone from the destination for good: its trash emptied or purged, or the file removed from the library folder.
    case missing
}

/// One content the destination no longer shows, as a check found it.
public struct DriftRecord: Sendable, Hashable {
    public var checksum: Checksum
    public var state: DriftState
    /// When a check first saw it so.
    public var seenAt: Date

    public init(checksum: Checksum, state: DriftState, seenAt: Date) {
        self.checksum = checksum
        self.state = state
        self.seenAt = seenAt
    }
}

/// What a catalog keeps of the destination's drift: the checks' times and what they found.
public protocol DriftCatalog: Sendable {
    /// When a check of `kind` last finished (a full check counts as a trash check too).
    func lastDestinationCheck(_ kind: DestinationCheckKind) async throws -> Date?
    /// Records a check in one commit: a full check's findings replace every drift record, a trash check's are
    /// added (a content already recorded keeps its first sighting).
    func recordDestinationCheck(_ kind: DestinationCheckKind, found: [DriftRecord], at date: Date) async throws
    /// Every drift record, by checksum.
    func destinationDrift() async throws -> [DriftRecord]
    /// The drift of these contents was mended (restored at the destination): their records go.
    func clearDrift(_ checksums: [Checksum]) async throws
    /// The destination lost these contents for good and a source still holds them: their asset rows and drift
    /// records go, and their Live Photo pairs wait for a link again, so the next walk brings them in as new content.
    func forgetLostContent(_ checksums: [Checksum]) async throws
}

extension SQLiteCatalog: DriftCatalog {
    public func lastDestinationCheck(_ kind: DestinationCheckKind) async throws -> Date? {
        let kinds = kind == .full ? [DestinationCheckKind.full] : [.full, .trash]
        return try await read { db in
            try StoredDate.fetchOne(db, sql: """
                SELECT max(checked_at) FROM destination_check WHERE kind IN (\(kinds.map { "'\($0.rawValue)'" }.joined(separator: ",")))
                """, arguments: [])
        }
    }

    public func recordDestinationCheck(_ kind: DestinationCheckKind, found: [DriftRecord], at date: Date) async throws {
        try await write { db in
            if kind == .full { try db.execute(sql: "DELETE FROM destination_drift") }
            let insert = try db.cachedStatement(sql: """
                INSERT INTO destination_drift (sha1, state, seen_at) VALUES (?, ?, ?)
                ON CONFLICT (sha1) DO UPDATE SET state = excluded.state
                """)
            for record in found {
                try insert.execute(arguments: [record.checksum.hex, record.state.rawValue, StoredDate.text(record.seenAt)])
            }
            try db.execute(sql: """
                INSERT INTO destination_check (kind, checked_at) VALUES (?, ?)
                ON CONFLICT (kind) DO UPDATE SET checked_at = excluded.checked_at
                """, arguments: [kind.rawValue, StoredDate.text(date)])
        }
    }

    public func destinationDrift() async throws -> [DriftRecord] {
        try await read { db in
            try DriftRow.order(DriftRow.Columns.sha1).fetchAll(db).compactMap(\.record)
        }
    }

    public func clearDrift(_ checksums: [Checksum]) async throws {
        guard !checksums.isEmpty else { return }
        try await write { db in
            let delete = try db.cachedStatement(sql: "DELETE FROM destination_drift WHERE sha1 = ?")
            for checksum in checksums { try delete.execute(arguments: [checksum.hex]) }
        }
    }

    public func forgetLostContent(_ checksums: [Checksum]) async throws {
        guard !checksums.isEmpty else { return }
        try await write { db in
            // Deleting the asset clears the snapshot's `in_library` (trigger `asset_deleted_leaves_library`).
            let asset = try db.cachedStatement(sql: "DELETE FROM asset WHERE sha1 = ?")
            let drift = try db.cachedStatement(sql: "DELETE FROM destination_drift WHERE sha1 = ?")
            let pair = try db.cachedStatement(sql: """
                UPDATE asset_pair SET linked_at = NULL WHERE still_sha1 = ? OR motion_sha1 = ?
                """)
            // Its stack is made again once it is back (the server's stack lost a member).
            let stack = try db.cachedStatement(sql: """
                UPDATE asset_stack SET linked_at = NULL
                WHERE primary_sha1 = (SELECT primary_sha1 FROM asset_stack WHERE member_sha1 = ?)
                """)
            for checksum in checksums {
                try asset.execute(arguments: [checksum.hex])
                try drift.execute(arguments: [checksum.hex])
                try pair.execute(arguments: [checksum.hex, checksum.hex])
                try stack.execute(arguments: [checksum.hex])
            }
        }
    }
}

/// One `destination_drift` row, decoded by column name; a row whose checksum or state does not parse is left out.
package struct DriftRow: Codable, FetchableRecord, TableRecord, CatalogRecord {
    package static let databaseTableName = "destination_drift"
    var sha1: String
    var state: String
    var seenAt: Date

    enum CodingKeys: String, CodingKey {
        case sha1, state, seenAt = "seen_at"
    }

    package enum Columns {
        static let sha1 = Column(CodingKeys.sha1)
    }

    package var record: DriftRecord? {
        guard let checksum = Checksum(hex: sha1), let state = DriftState(rawValue: state) else { return nil }
        return DriftRecord(checksum: checksum, state: state, seenAt: seenAt)
    }
}
