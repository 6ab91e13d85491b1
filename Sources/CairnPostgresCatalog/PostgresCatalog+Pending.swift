import CairnCatalog
import CairnCore
import Foundation
import Logging
import PostgresNIO

/// `cairn pending` in PostgreSQL: what waits as of each source's last sync, and the approve and exclude verbs.
extension PostgresCatalog {
    public func pending(sourceID: Int64?) async throws -> [PendingItem] {
        return try await failing("read what waits") { [self] in
            var binds = PostgresBindings()
            if let sourceID { binds.append(sourceID) }
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT source_id, sha1, status, confirmed_at, eligible_at, run_id FROM cairn.reconcile_pending
                \(sourceID == nil ? "" : "WHERE source_id = $1")
                """, binds: binds), logger: logger)
            return PendingItem.inListOrder(try await rows.records(PendingRow.self).compactMap(\.item))
        }
    }

    public func removePending(_ checksums: [Checksum]) async throws {
        guard !checksums.isEmpty else { return }
        let hexes = checksums.map(\.hex)
        return try await failing("drop \(checksums.count) checksums from what waits") { [self] in
            try await client.query("DELETE FROM cairn.reconcile_pending WHERE sha1 = ANY(\(hexes)::text[])", logger: logger)
        }
    }

    public func approve(_ checksums: [Checksum], sourceIDs: [Int64], at now: Date) async throws {
        let hexes = checksums.map(\.hex)
        return try await failing("approve \(checksums.count) deletions") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                let unseen = try await connection.query("""
                    SELECT c FROM unnest(\(hexes)::text[]) AS c WHERE NOT EXISTS (SELECT 1 FROM cairn.reconcile_observed o
                      WHERE o.sha1 = c AND o.source_id = ANY(\(sourceIDs)::bigint[]))
                    LIMIT 1
                    """, logger: logger)
                for try await hex in unseen.decode(String.self) {
                    let scope = sourceIDs.count == 1 ? "this source" : "any source"
                    throw ReconcileStoreError("\(hex) was never seen in \(scope) of this library; nothing was approved")
                }
                try await connection.query("""
                    INSERT INTO cairn.reconcile_approval (source_id, sha1, approved_at)
                    SELECT s, c, \(now) FROM unnest(\(sourceIDs)::bigint[]) AS s, unnest(\(hexes)::text[]) AS c
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
                try await connection.query("""
                    DELETE FROM cairn.reconcile_exclusion
                    WHERE source_id = ANY(\(sourceIDs)::bigint[]) AND sha1 = ANY(\(hexes)::text[])
                    """, logger: logger)
                try await connection.query("""
                    UPDATE cairn.reconcile_pending SET status = 'approved'
                    WHERE source_id = ANY(\(sourceIDs)::bigint[]) AND sha1 = ANY(\(hexes)::text[])
                    """, logger: logger)
            }
        }
    }

    public func exclude(_ checksums: [Checksum], sourceIDs: [Int64], at now: Date) async throws {
        return try await failing("exclude \(checksums.count) checksums") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.exclude(checksums.map(\.hex), sourceIDs: sourceIDs, at: now, on: connection, logger: logger)
            }
        }
    }

    public func excludeConfirmed(sinceRunID runID: String, sourceIDs: [Int64], at now: Date) async throws -> [Checksum] {
        return try await failing("exclude what run \(runID) and later confirmed") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                let since = try await connection.query("""
                    SELECT COALESCE((SELECT min(confirmed_at) FROM cairn.reconcile_confirmed WHERE run_id = \(runID)),
                                    (SELECT started_at FROM cairn.run WHERE id = \(runID)))
                    """, logger: logger)
                var start: Date?
                for try await date in since.decode(Date?.self) { start = date }
                guard let start else {
                    throw ReconcileStoreError("no run \(runID) in this library (see `cairn journal list` or `cairn status`)")
                }
                // Each source's own confirmations, as the SQLite catalog excludes them.
                var excluded = Set<String>()
                for sourceID in sourceIDs {
                    let own = try await connection.query("""
                        SELECT sha1 FROM cairn.reconcile_confirmed WHERE source_id = \(sourceID) AND confirmed_at >= \(start)
                        """, logger: logger)
                    var hexes: [String] = []
                    for try await hex in own.decode(String.self) { hexes.append(hex) }
                    try await Self.exclude(hexes, sourceIDs: [sourceID], at: now, on: connection, logger: logger)
                    excluded.formUnion(hexes)
                }
                return excluded.compactMap(Checksum.init(hex:)).sorted()
            }
        }
    }

    static func exclude(_ hexes: [String], sourceIDs: [Int64], at now: Date, on connection: PostgresConnection,
                        logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO cairn.reconcile_exclusion (source_id, sha1, excluded_at)
            SELECT s, c, \(now) FROM unnest(\(sourceIDs)::bigint[]) AS s, unnest(\(hexes)::text[]) AS c
            ON CONFLICT DO NOTHING
            """, logger: logger)
        for table in ["cairn.reconcile_approval", "cairn.reconcile_pending"] {
            try await connection.query(PostgresQuery(unsafeSQL: """
                DELETE FROM \(table) WHERE source_id = ANY($1::bigint[]) AND sha1 = ANY($2::text[])
                """, binds: try binds(sourceIDs, hexes)), logger: logger)
        }
    }

    static func replacePending(sourceID: Int64, runID: String, entries: [PendingEntry], on connection: PostgresConnection,
                               logger: Logger) async throws {
        let latest = entries.lastOfEach(by: \.checksum)
        let rows = try json(latest.map {
            PendingRow(sourceID: sourceID, sha1: $0.checksum.hex, status: $0.status.rawValue, confirmedAt: $0.confirmedAt,
                       eligibleAt: $0.eligibleAt, runID: runID)
        })
        try await connection.query("DELETE FROM cairn.reconcile_pending WHERE source_id = \(sourceID)", logger: logger)
        try await connection.query("""
            INSERT INTO cairn.reconcile_pending (source_id, sha1, status, confirmed_at, eligible_at, run_id)
            SELECT x.source_id, x.sha1, x.status, to_timestamp(x.confirmed_at), to_timestamp(x.eligible_at), x.run_id
            FROM jsonb_to_recordset(\(rows)::jsonb) AS x(source_id bigint, sha1 text, status text,
              confirmed_at double precision, eligible_at double precision, run_id text)
            """, logger: logger)
    }
}
