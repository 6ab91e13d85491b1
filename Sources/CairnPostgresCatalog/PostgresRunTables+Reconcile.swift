import CairnCatalog
import CairnCore
import Foundation
import PostgresNIO

// A sync's reconciliation in PostgreSQL, as in SQLite (`RunFileTable+Reconcile`): `TEMP` tables of the run's
// connection carry the work:
// - `run_current`: this scan, path → checksum (a file that could not be hashed keeps its last checksum);
// - `run_path_change`: only the paths where the scan, the last healthy snapshot and the edit anchor do not all
//   agree, with all three checksums (one full join of the three; PostgreSQL merges or hashes it);
// - `run_protected`: the content the edit anchors of the changed live paths protect.
extension PostgresRunTables {
    func compareWithHealthySnapshot() async throws -> SnapshotComparison {
        try await failing("compare the scan with the last healthy snapshot") { [self] in
            for statement in [
                "DROP TABLE IF EXISTS pg_temp.run_current, pg_temp.run_path_change, pg_temp.run_protected",
                "CREATE TEMP TABLE run_current (path text PRIMARY KEY, sha1 text NOT NULL)",
                """
                INSERT INTO pg_temp.run_current
                SELECT path, CASE WHEN failed AND previous_sha1 IS NOT NULL THEN previous_sha1 ELSE sha1 END
                FROM pg_temp.run_file WHERE sha1 IS NOT NULL OR (failed AND previous_sha1 IS NOT NULL)
                ON CONFLICT DO NOTHING
                """,
                "CREATE INDEX run_current_sha1 ON pg_temp.run_current (sha1)",
                "ANALYZE pg_temp.run_current",
                "CREATE TEMP TABLE run_path_change (path text PRIMARY KEY, sha1 text, previous_sha1 text, anchor_sha1 text)",
            ] { try await execute(statement) }
            try await execute("""
                INSERT INTO pg_temp.run_path_change (path, sha1, previous_sha1, anchor_sha1)
                SELECT COALESCE(c.path, h.relative_path, a.relative_path), c.sha1, h.sha1, a.sha1
                FROM pg_temp.run_current c
                FULL JOIN (SELECT relative_path, sha1 FROM cairn.reconcile_healthy_snapshot WHERE source_id = $1) h
                  ON h.relative_path = c.path
                FULL JOIN (SELECT relative_path, sha1 FROM cairn.reconcile_anchor WHERE source_id = $1) a
                  ON a.relative_path = COALESCE(c.path, h.relative_path)
                WHERE c.sha1 IS NULL OR h.sha1 IS NULL OR a.sha1 IS NULL OR c.sha1 <> h.sha1 OR c.sha1 <> a.sha1
                """, PostgresCatalog.binds(sourceID))
            // The anchors of the live paths protect their content; a path not listed has its anchor equal to its
            // current content, which the scan holds anyway.
            try await execute("CREATE TEMP TABLE run_protected (sha1 text PRIMARY KEY)")
            try await execute("""
                INSERT INTO pg_temp.run_protected
                SELECT COALESCE(anchor_sha1, previous_sha1, sha1) FROM pg_temp.run_path_change WHERE sha1 IS NOT NULL
                ON CONFLICT DO NOTHING
                """)
            try await execute("ANALYZE pg_temp.run_path_change")
            let current = try await scalar(Int.self, "SELECT count(*) FROM pg_temp.run_current")
            let previous = try await scalar(Int.self, "SELECT count(*) FROM cairn.reconcile_healthy_snapshot WHERE source_id = $1",
                                            PostgresCatalog.binds(sourceID))
            let vanished = try await scalar(Int.self, """
                SELECT count(*) FROM pg_temp.run_path_change WHERE sha1 IS NULL AND previous_sha1 IS NOT NULL
                """)
            return SnapshotComparison(previousFiles: previous, currentFiles: current, vanishedFiles: vanished)
        }
    }

    func scanSignals(sourceIsHealthy: Bool) async throws -> ScanSignals {
        try await failing("work out the scan's deletion signals") { [self] in
            var signals = ScanSignals()
            signals.reappeared = try await checksums("""
                SELECT sha1 FROM cairn.reconcile_confirmed f WHERE f.source_id = $1
                  AND EXISTS (SELECT 1 FROM pg_temp.run_current c WHERE c.sha1 = f.sha1)
                UNION
                SELECT sha1 FROM cairn.reconcile_approval v WHERE v.source_id = $1
                  AND EXISTS (SELECT 1 FROM pg_temp.run_current c WHERE c.sha1 = v.sha1)
                """, PostgresCatalog.binds(sourceID))
            guard sourceIsHealthy else { return signals }
            signals.deletedPaths = try await paths("SELECT path FROM pg_temp.run_path_change WHERE sha1 IS NULL")
            signals.releasedPaths = try await paths("""
                SELECT path FROM pg_temp.run_path_change WHERE sha1 IS NULL AND anchor_sha1 IS NOT NULL
                """)
            signals.editedPaths = try await paths("""
                SELECT path FROM pg_temp.run_path_change
                WHERE sha1 IS NOT NULL AND previous_sha1 IS NOT NULL AND previous_sha1 <> sha1
                """)
            // Retired: the last content and the anchor of a gone path, and the content an edit replaced unless it
            // was the path's anchor. Stamped unless the scan still holds it, a live path's anchor protects it, or
            // it was confirmed before (the first stamp wins).
            signals.stamped = try await checksums("""
                WITH retired(sha1) AS (
                  SELECT previous_sha1 FROM pg_temp.run_path_change WHERE sha1 IS NULL AND previous_sha1 IS NOT NULL
                  UNION SELECT anchor_sha1 FROM pg_temp.run_path_change WHERE sha1 IS NULL AND anchor_sha1 IS NOT NULL
                  UNION SELECT previous_sha1 FROM pg_temp.run_path_change
                    WHERE sha1 IS NOT NULL AND previous_sha1 IS NOT NULL AND previous_sha1 <> sha1
                      AND anchor_sha1 IS NOT NULL AND anchor_sha1 <> previous_sha1)
                SELECT r.sha1 FROM retired r
                WHERE NOT EXISTS (SELECT 1 FROM pg_temp.run_current c WHERE c.sha1 = r.sha1)
                  AND NOT EXISTS (SELECT 1 FROM pg_temp.run_protected p WHERE p.sha1 = r.sha1)
                  AND NOT EXISTS (SELECT 1 FROM cairn.reconcile_confirmed f WHERE f.source_id = $1 AND f.sha1 = r.sha1)
                """, PostgresCatalog.binds(sourceID))
            return signals
        }
    }

    func absentContent(stamped: [Checksum], at now: Date) async throws -> [AbsentContent] {
        let stampedNow = Set(stamped)
        return try await failing("list the content the source no longer holds") { [self] in
            try await all(AbsentContentRow.self, """
                SELECT o.sha1,
                  (SELECT f.confirmed_at FROM cairn.reconcile_confirmed f WHERE f.source_id = $1 AND f.sha1 = o.sha1)
                    AS confirmed_at,
                  EXISTS (SELECT 1 FROM cairn.reconcile_approval v WHERE v.source_id = $1 AND v.sha1 = o.sha1) AS approved
                FROM cairn.reconcile_observed o
                WHERE o.source_id = $1
                  AND NOT EXISTS (SELECT 1 FROM pg_temp.run_current c WHERE c.sha1 = o.sha1)
                  AND EXISTS (SELECT 1 FROM cairn.asset a WHERE a.sha1 = o.sha1)
                  AND NOT EXISTS (SELECT 1 FROM cairn.source_file s WHERE s.sha1 = o.sha1 AND s.source_id <> $1)
                  AND NOT EXISTS (SELECT 1 FROM cairn.reconcile_exclusion e WHERE e.source_id = $1 AND e.sha1 = o.sha1)
                  AND NOT EXISTS (SELECT 1 FROM pg_temp.run_protected p WHERE p.sha1 = o.sha1)
                """, PostgresCatalog.binds(sourceID)).compactMap { $0.content(stampedNow: stampedNow, at: now) }
        }
    }

    func contentMissingFromLibrary() async throws -> [Checksum] {
        try await failing("list the scan's content the library lacks") { [self] in
            try await checksums("""
                SELECT sha1 FROM pg_temp.run_content WHERE NOT in_library
                UNION
                SELECT r.previous_sha1 FROM pg_temp.run_file r
                WHERE r.failed AND r.previous_sha1 IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM cairn.asset a WHERE a.sha1 = r.previous_sha1)
                """)
        }
    }

    func lastSourcePaths(of checksums: [Checksum]) async throws -> [Checksum: String] {
        guard !checksums.isEmpty else { return [:] }
        return try await failing("find where \(checksums.count) deleted files lived") { [self] in
            var paths: [Checksum: String] = [:]
            for row in try await all(PathChecksumRow.self, """
                SELECT k.previous_sha1 AS sha1, min(k.path COLLATE "C") AS relative_path FROM pg_temp.run_path_change k
                WHERE k.previous_sha1 = ANY($1::text[]) GROUP BY k.previous_sha1
                """, PostgresCatalog.binds(checksums.map(\.hex))) {
                if let checksum = Checksum(hex: row.sha1) { paths[checksum] = row.relativePath }
            }
            return paths
        }
    }

    func commit(_ sync: SyncRecord, currentFiles: Int) async throws {
        try await failing("record sync \(sync.runID) in the reconciliation stores") { [self] in
            let (sourceID, logger) = (sourceID, logger)
            try await connection.withTransaction(logger: logger) { connection in
                func run(_ sql: String) async throws {
                    try await connection.query(PostgresQuery(unsafeSQL: sql, binds: try PostgresCatalog.binds(sourceID)),
                                               logger: logger)
                }
                try await run("""
                    INSERT INTO cairn.reconcile_observed (source_id, sha1)
                    SELECT DISTINCT $1::bigint, sha1 FROM pg_temp.run_path_change WHERE sha1 IS NOT NULL ON CONFLICT DO NOTHING
                    """)
                try await run("""
                    INSERT INTO cairn.reconcile_anchor (source_id, relative_path, sha1)
                    SELECT $1::bigint, path, COALESCE(previous_sha1, sha1) FROM pg_temp.run_path_change
                    WHERE sha1 IS NOT NULL AND anchor_sha1 IS NULL ON CONFLICT DO NOTHING
                    """)
                try await PostgresCatalog.apply(sync.changes, sourceID: sourceID, runID: sync.runID, on: connection,
                                                logger: logger)
                if sync.advanceSnapshot {
                    try await run("""
                        DELETE FROM cairn.reconcile_anchor WHERE source_id = $1 AND relative_path IN
                          (SELECT path FROM pg_temp.run_path_change WHERE sha1 IS NULL AND anchor_sha1 IS NOT NULL)
                        """)
                    try await run("""
                        DELETE FROM cairn.reconcile_healthy_snapshot WHERE source_id = $1 AND relative_path IN
                          (SELECT path FROM pg_temp.run_path_change WHERE sha1 IS NULL AND previous_sha1 IS NOT NULL)
                        """)
                    try await run("""
                        INSERT INTO cairn.reconcile_healthy_snapshot (source_id, relative_path, sha1)
                        SELECT $1::bigint, path, sha1 FROM pg_temp.run_path_change
                        WHERE sha1 IS NOT NULL AND previous_sha1 IS DISTINCT FROM sha1
                        ON CONFLICT (source_id, relative_path) DO UPDATE SET sha1 = excluded.sha1
                        """)
                }
                try await PostgresCatalog.recordSync(sync, sourceID: sourceID, healthyFileCount: currentFiles,
                                                     on: connection, logger: logger)
            }
        }
    }

    /// The checksums `sql` selects, sorted.
    private func checksums(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> [Checksum] {
        try await query(sql, binds).checksums().sorted()
    }

    /// The paths `sql` selects, sorted bytewise.
    private func paths(_ sql: String) async throws -> [String] {
        var paths: [String] = []
        for try await path in try await query(sql + " ORDER BY path COLLATE \"C\"").decode(String.self) { paths.append(path) }
        return paths
    }
}
