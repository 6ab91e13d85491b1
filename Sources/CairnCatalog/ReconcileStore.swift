import CairnCore
import Foundation
import GRDB

/// The SQL of the reconciliation stores, per source, run inside the SQLite catalog's transactions.
///
/// Writes a run's `StoreDelta` with the stores' own semantics: observed is a union, confirmations and anchors are
/// first-write-wins (`INSERT OR IGNORE`), a reappearance removes the stamp and any approval.
enum ReconcileStore {
    static func apply(_ delta: StoreDelta, sourceID: Int64, runID: String?, _ db: Database) throws {
        let observe = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO reconcile_observed (source_id, sha1) VALUES (?, ?)")
        for checksum in delta.observedAdded { try observe.execute(arguments: [sourceID, checksum]) }

        let unconfirm = try db.cachedStatement(sql: "DELETE FROM reconcile_confirmed WHERE source_id = ? AND sha1 = ?")
        let unapprove = try db.cachedStatement(sql: "DELETE FROM reconcile_approval WHERE source_id = ? AND sha1 = ?")
        for checksum in delta.reappeared {
            try unconfirm.execute(arguments: [sourceID, checksum])
            try unapprove.execute(arguments: [sourceID, checksum])
        }

        let confirm = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO reconcile_confirmed (source_id, sha1, confirmed_at, run_id) VALUES (?, ?, ?, ?)
            """)
        for checksum in delta.confirmedStamped {
            try confirm.execute(arguments: [sourceID, checksum, StoredDate.text(delta.stampedAt), runID])
        }

        let anchor = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO reconcile_anchor (source_id, relative_path, sha1) VALUES (?, ?, ?)")
        for (path, checksum) in delta.anchorsAdded.sorted(by: { $0.key < $1.key }) {
            try anchor.execute(arguments: [sourceID, path, checksum])
        }
        let release = try db.cachedStatement(
            sql: "DELETE FROM reconcile_anchor WHERE source_id = ? AND relative_path = ?")
        for path in delta.anchorsReleased { try release.execute(arguments: [sourceID, path]) }
    }

    // MARK: Source facts

    static func saveFacts(_ facts: ReconcileSourceFacts, sourceID: Int64, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO reconcile_source (source_id, had_marker, first_run_done, last_sync_run_id, last_healthy_run_id,
                                          last_healthy_file_count, last_healthy_scan_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (source_id) DO UPDATE SET
                had_marker = excluded.had_marker, first_run_done = excluded.first_run_done,
                last_sync_run_id = excluded.last_sync_run_id, last_healthy_run_id = excluded.last_healthy_run_id,
                last_healthy_file_count = excluded.last_healthy_file_count,
                last_healthy_scan_at = excluded.last_healthy_scan_at
            """, arguments: [sourceID, facts.hadMarker, facts.firstRunDone, facts.lastSyncRunID, facts.lastHealthyRunID,
                             facts.lastHealthyFileCount, facts.lastHealthyScanAt.map(StoredDate.text)])
    }

    /// A sync's bookkeeping, inside its transaction: the source's facts move on (a healthy scan also records the
    /// marker, the file count and that the first run is done), and the waiting items for `pending list` are replaced.
    static func recordSync(_ sync: SyncRecord, sourceID: Int64, healthyFileCount: Int, _ db: Database) throws {
        var facts = try Self.facts(db, sourceID: sourceID)
        facts.record(sync, healthyFileCount: healthyFileCount)
        try Self.saveFacts(facts, sourceID: sourceID, db)
        try Self.replacePending(sourceID: sourceID, runID: sync.runID, entries: sync.pending, db)
    }

    static func facts(_ db: Database, sourceID: Int64) throws -> ReconcileSourceFacts {
        try ReconcileSourceRow.filter(ReconcileSourceRow.Columns.sourceID == sourceID).fetchOne(db)?.facts
            ?? ReconcileSourceFacts()
    }
}
