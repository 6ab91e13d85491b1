import CairnCore
import Foundation
import GRDB

// `cairn pending`: what waits as of each source's last sync, and the approve / exclude verbs.
extension SQLiteCatalog {
    /// The sources of this library, by id.
    public func sources() async throws -> [SourceRecord] {
        try await read { db in try SourceRecord.order(SourceRecord.Columns.id).fetchAll(db) }
    }

    /// The id of the source registered at `rootPath`, without registering it (a missing source root
    /// must not become a new, empty source).
    public func existingSourceID(forRoot rootPath: String) async throws -> Int64? {
        try await read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM source WHERE root_path = ?", arguments: [rootPath])
        }
    }

    /// What waits, for one source or all, ordered by source, status, eligible date, checksum.
    public func pending(sourceID: Int64?) async throws -> [PendingItem] {
        try await read { db in
            var request = PendingRow.all()
            if let sourceID { request = request.filter(PendingRow.Columns.sourceID == sourceID) }
            return PendingItem.inListOrder(try request.fetchAll(db).compactMap(\.item))
        }
    }

    /// Drops checksums from every source's waiting list (they were trashed, or a person decided).
    public func removePending(_ checksums: [Checksum]) async throws {
        guard !checksums.isEmpty else { return }
        try await write { db in
            let delete = try db.cachedStatement(sql: "DELETE FROM reconcile_pending WHERE sha1 = ?")
            for checksum in checksums { try delete.execute(arguments: [checksum]) }
        }
    }

    /// `cairn pending approve`: trash at the next sync that passes the safety rails, skipping
    /// quarantine and review. Undoes an exclusion. Only checksums a source has observed are accepted.
    public func approve(_ checksums: [Checksum], sourceIDs: [Int64], at now: Date) async throws {
        try await write { db in
            try ReconcileStore.requireObserved(checksums, sourceIDs: sourceIDs, db)
            for sourceID in sourceIDs {
                for checksum in checksums {
                    try db.execute(sql: """
                        INSERT OR IGNORE INTO reconcile_approval (source_id, sha1, approved_at) VALUES (?, ?, ?)
                        """, arguments: [sourceID, checksum, StoredDate.text(now)])
                    try db.execute(sql: "DELETE FROM reconcile_exclusion WHERE source_id = ? AND sha1 = ?",
                                   arguments: [sourceID, checksum])
                    try db.execute(sql: """
                        UPDATE reconcile_pending SET status = 'approved' WHERE source_id = ? AND sha1 = ?
                        """, arguments: [sourceID, checksum])
                }
            }
        }
    }

    /// `cairn pending exclude`: keep these in the library whatever happens at the source. Undoes an approval.
    public func exclude(_ checksums: [Checksum], sourceIDs: [Int64], at now: Date) async throws {
        try await write { db in try ReconcileStore.exclude(checksums, sourceIDs: sourceIDs, at: now, db) }
    }

    /// `cairn pending exclude --all-confirmed-since RUN`: excludes every deletion confirmed by that run
    /// or later (by confirmation time, the run's own stamp time included). Returns them, sorted.
    @discardableResult
    public func excludeConfirmed(sinceRunID runID: String, sourceIDs: [Int64], at now: Date) async throws -> [Checksum] {
        try await write { db in
            let stamped = try StoredDate.fetchOne(
                db, sql: "SELECT MIN(confirmed_at) FROM reconcile_confirmed WHERE run_id = ?", arguments: [runID])
            let started = try StoredDate.fetchOne(db, sql: "SELECT started_at FROM run WHERE id = ?", arguments: [runID])
            guard let since = stamped ?? started else {
                throw ReconcileStoreError("no run \(runID) in this library (see `cairn journal list` or `cairn status`)")
            }
            var excluded = Set<Checksum>()
            for sourceID in sourceIDs {
                let hexes = try String.fetchAll(db, sql: """
                    SELECT sha1 FROM reconcile_confirmed WHERE source_id = ? AND confirmed_at >= ?
                    """, arguments: [sourceID, StoredDate.text(since)])
                let checksums = hexes.compactMap(Checksum.init(hex:))
                try ReconcileStore.exclude(checksums, sourceIDs: [sourceID], at: now, db)
                excluded.formUnion(checksums)
            }
            return excluded.sorted()
        }
    }
}

extension ReconcileStore {
    static func replacePending(sourceID: Int64, runID: String, entries: [PendingEntry], _ db: Database) throws {
        try db.execute(sql: "DELETE FROM reconcile_pending WHERE source_id = ?", arguments: [sourceID])
        let insert = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO reconcile_pending (source_id, sha1, status, confirmed_at, eligible_at, run_id)
            VALUES (?, ?, ?, ?, ?, ?)
            """)
        for entry in entries {
            try insert.execute(arguments: [sourceID, entry.checksum, entry.status.rawValue,
                                           entry.confirmedAt.map(StoredDate.text),
                                           entry.eligibleAt.map(StoredDate.text), runID])
        }
    }

    static func exclude(_ checksums: [Checksum], sourceIDs: [Int64], at now: Date, _ db: Database) throws {
        for sourceID in sourceIDs {
            for checksum in checksums {
                try db.execute(sql: """
                    INSERT OR IGNORE INTO reconcile_exclusion (source_id, sha1, excluded_at) VALUES (?, ?, ?)
                    """, arguments: [sourceID, checksum, StoredDate.text(now)])
                try db.execute(sql: "DELETE FROM reconcile_approval WHERE source_id = ? AND sha1 = ?",
                               arguments: [sourceID, checksum])
                try db.execute(sql: "DELETE FROM reconcile_pending WHERE source_id = ? AND sha1 = ?",
                               arguments: [sourceID, checksum])
            }
        }
    }

    static func requireObserved(_ checksums: [Checksum], sourceIDs: [Int64], _ db: Database) throws {
        for checksum in checksums {
            var seen = false
            for sourceID in sourceIDs where !seen {
                seen = try Bool.fetchOne(db, sql: """
                    SELECT EXISTS (SELECT 1 FROM reconcile_observed WHERE source_id = ? AND sha1 = ?)
                    """, arguments: [sourceID, checksum]) ?? false
            }
            guard seen else {
                throw ReconcileStoreError("\(checksum.hex) was never seen in \(sourceIDs.count == 1 ? "this source" : "any source") of this library; nothing was approved")
            }
        }
    }
}
