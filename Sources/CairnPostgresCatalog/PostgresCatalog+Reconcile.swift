import CairnCatalog
import CairnCore
import Foundation
import Logging
import PostgresNIO

/// The reconciliation stores in PostgreSQL, as `ReconcileCatalog` describes them: observed is a union,
/// confirmations and anchors are first-write-wins (`ON CONFLICT DO NOTHING`), a reappearance removes the stamp and
/// any approval, all of a delta (or of a sync) in one transaction. The `cairn pending` verbs are in
/// `PostgresCatalog+Pending.swift`.
extension PostgresCatalog: ReconcileCatalog {
    public func reconcileFacts(sourceID: Int64) async throws -> ReconcileSourceFacts {
        return try await failing("read what reconciliation remembers of source \(sourceID)") { [self] in
            try await client.withConnection { try await Self.facts(sourceID: sourceID, on: $0, logger: logger) }
        }
    }

    /// A sync's bookkeeping, inside its transaction: the source's facts move on (a healthy scan also records the
    /// marker, the file count and that the first run is done), and the waiting items for `pending list` are replaced.
    static func recordSync(_ sync: SyncRecord, sourceID: Int64, healthyFileCount: Int, on connection: PostgresConnection,
                           logger: Logger) async throws {
        var facts = try await Self.facts(sourceID: sourceID, on: connection, logger: logger)
        facts.record(sync, healthyFileCount: healthyFileCount)
        try await Self.saveFacts(facts, sourceID: sourceID, on: connection, logger: logger)
        try await Self.replacePending(sourceID: sourceID, runID: sync.runID, entries: sync.pending, on: connection,
                                      logger: logger)
    }

    // MARK: Within a transaction

    static func apply(_ delta: StoreDelta, sourceID: Int64, runID: String?, on connection: PostgresConnection,
                      logger: Logger) async throws {
        let observed = delta.observedAdded.map(\.hex), reappeared = delta.reappeared.map(\.hex)
        let confirmed = delta.confirmedStamped.map(\.hex), stampedAt = delta.stampedAt
        let anchorPaths = delta.anchorsAdded.keys.sorted(), anchorChecksums = anchorPaths.map { delta.anchorsAdded[$0]!.hex }
        let released = delta.anchorsReleased
        try await connection.query("""
            INSERT INTO cairn.reconcile_observed (source_id, sha1)
            SELECT \(sourceID), sha1 FROM unnest(\(observed)::text[]) AS sha1 ON CONFLICT DO NOTHING
            """, logger: logger)
        try await connection.query("""
            DELETE FROM cairn.reconcile_confirmed WHERE source_id = \(sourceID) AND sha1 = ANY(\(reappeared)::text[])
            """, logger: logger)
        try await connection.query("""
            DELETE FROM cairn.reconcile_approval WHERE source_id = \(sourceID) AND sha1 = ANY(\(reappeared)::text[])
            """, logger: logger)
        try await connection.query("""
            INSERT INTO cairn.reconcile_confirmed (source_id, sha1, confirmed_at, run_id)
            SELECT \(sourceID), sha1, \(stampedAt), \(runID) FROM unnest(\(confirmed)::text[]) AS sha1
            ON CONFLICT DO NOTHING
            """, logger: logger)
        try await connection.query("""
            INSERT INTO cairn.reconcile_anchor (source_id, relative_path, sha1)
            SELECT \(sourceID), x.path, x.sha1 FROM unnest(\(anchorPaths)::text[], \(anchorChecksums)::text[]) AS x(path, sha1)
            ON CONFLICT DO NOTHING
            """, logger: logger)
        try await connection.query("""
            DELETE FROM cairn.reconcile_anchor WHERE source_id = \(sourceID) AND relative_path = ANY(\(released)::text[])
            """, logger: logger)
    }

    static func facts(sourceID: Int64, on connection: PostgresConnection, logger: Logger) async throws -> ReconcileSourceFacts {
        let rows = try await connection.query("""
            SELECT had_marker, first_run_done, last_sync_run_id, last_healthy_run_id, last_healthy_file_count,
              last_healthy_scan_at
            FROM cairn.reconcile_source WHERE source_id = \(sourceID)
            """, logger: logger)
        for try await row in rows { return try ReconcileSourceRow(from: PostgresRowDecoder(row)).facts }
        return ReconcileSourceFacts()
    }

    static func saveFacts(_ facts: ReconcileSourceFacts, sourceID: Int64, on connection: PostgresConnection,
                          logger: Logger) async throws {
        let fileCount = facts.lastHealthyFileCount.map(Int64.init)
        try await connection.query("""
            INSERT INTO cairn.reconcile_source (source_id, had_marker, first_run_done, last_sync_run_id,
              last_healthy_run_id, last_healthy_file_count, last_healthy_scan_at)
            VALUES (\(sourceID), \(facts.hadMarker), \(facts.firstRunDone), \(facts.lastSyncRunID),
              \(facts.lastHealthyRunID), \(fileCount)::integer, \(facts.lastHealthyScanAt))
            ON CONFLICT (source_id) DO UPDATE SET had_marker = excluded.had_marker,
              first_run_done = excluded.first_run_done, last_sync_run_id = excluded.last_sync_run_id,
              last_healthy_run_id = excluded.last_healthy_run_id,
              last_healthy_file_count = excluded.last_healthy_file_count,
              last_healthy_scan_at = excluded.last_healthy_scan_at
            """, logger: logger)
    }
}
