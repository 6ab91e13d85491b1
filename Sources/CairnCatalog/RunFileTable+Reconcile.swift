import CSQLite
import CairnCore
import Foundation
import GRDB

// A sync's reconciliation, worked out in SQL over the run tables and the reconciliation stores, so that a
// million-file source is never held as path → checksum maps or checksum sets in memory. These statements follow the
// rules of the in-memory engine (`DeletionSignals` and `Reconciler.reconcile` in Tests/CairnReconcileOracle), which
// stays their specification: `ReconcileRunContractTests` checks them against it on random runs.
//
// Temporary tables carry the work:
// - `run_current`: this scan, path → checksum (a file that could not be hashed keeps its last checksum, so an
//   unreadable file never reads as deleted);
// - `run_path_change`: only the paths where the scan, the last healthy snapshot and the edit anchor do not all
//   agree, with all three checksums. An unchanged source leaves it empty; everything the signals need is there;
// - `run_protected`: the content the edit anchors of the changed live paths protect.

extension RunFileTable {
    /// Builds `run_current` and `run_path_change` and counts what the rails need. Reads the stores, writes only the
    /// run's temporary tables (a dry run may call it).
    public func compareWithHealthySnapshot() async throws -> SnapshotComparison {
        try await catalog.write { db in
            try db.execute(sql: """
                DROP TABLE IF EXISTS temp.run_current;
                DROP TABLE IF EXISTS temp.run_path_change;
                DROP TABLE IF EXISTS temp.run_protected;
                CREATE TEMP TABLE run_current (path TEXT PRIMARY KEY NOT NULL, sha1 TEXT NOT NULL) WITHOUT ROWID;
                CREATE TEMP TABLE run_path_change (
                    path TEXT PRIMARY KEY NOT NULL,
                    sha1 TEXT,
                    previous_sha1 TEXT,
                    anchor_sha1 TEXT
                ) WITHOUT ROWID;
                INSERT OR IGNORE INTO temp.run_current
                    SELECT path, CASE WHEN failed = 1 AND previous_sha1 IS NOT NULL THEN previous_sha1 ELSE sha1 END
                    FROM temp.run_file WHERE sha1 IS NOT NULL OR (failed = 1 AND previous_sha1 IS NOT NULL)
                    UNION ALL
                    SELECT s.relative_path, s.sha1 FROM \(settledFiles)
                    ORDER BY 1;
                CREATE INDEX temp.run_current_sha1 ON run_current(sha1);
                """)
            let counts = try Self.listChangedPaths(sourceID: sourceID, db)
            // The anchors of the live paths protect their content. A path not in run_path_change has its anchor
            // equal to its current content, which the scan holds anyway, so only the changed paths are listed.
            try db.execute(sql: """
                CREATE TEMP TABLE run_protected (sha1 TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
                INSERT OR IGNORE INTO temp.run_protected
                    SELECT COALESCE(anchor_sha1, previous_sha1, sha1) FROM temp.run_path_change WHERE sha1 IS NOT NULL;
                """)
            var comparison = SnapshotComparison(previousFiles: counts.previous, currentFiles: counts.current)
            comparison.vanishedFiles = try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM temp.run_path_change WHERE sha1 IS NULL AND previous_sha1 IS NOT NULL
                """) ?? 0
            return comparison
        }
    }

    /// The deletion signals of this scan, after `compareWithHealthySnapshot`. An unhealthy scan only unstamps what
    /// came back: it confirms, releases and explains nothing.
    public func scanSignals(sourceIsHealthy: Bool) async throws -> ScanSignals {
        try await catalog.write { db in
            let source: StatementArguments = ["source": sourceID]
            var signals = ScanSignals()
            signals.reappeared = try Checksum.fetchAll(db, sql: """
                SELECT sha1 FROM main.reconcile_confirmed f WHERE f.source_id = :source
                    AND EXISTS (SELECT 1 FROM temp.run_current c WHERE c.sha1 = f.sha1)
                UNION
                SELECT sha1 FROM main.reconcile_approval v WHERE v.source_id = :source
                    AND EXISTS (SELECT 1 FROM temp.run_current c WHERE c.sha1 = v.sha1)
                """, arguments: source).sorted()
            guard sourceIsHealthy else { return signals }

            signals.deletedPaths = try String.fetchAll(
                db, sql: "SELECT path FROM temp.run_path_change WHERE sha1 IS NULL ORDER BY path")
            signals.releasedPaths = try String.fetchAll(db, sql: """
                SELECT path FROM temp.run_path_change WHERE sha1 IS NULL AND anchor_sha1 IS NOT NULL ORDER BY path
                """)
            signals.editedPaths = try String.fetchAll(db, sql: """
                SELECT path FROM temp.run_path_change WHERE sha1 IS NOT NULL AND previous_sha1 IS NOT NULL
                    AND previous_sha1 != sha1 ORDER BY path
                """)
            // Retired: the last content and the anchor of a gone path, and the content an edit replaced unless it
            // was the path's anchor (an unanchored path takes its snapshot content as anchor, so that is never
            // retired). It is stamped unless the scan still holds it, a live path's anchor protects it, or it was
            // confirmed before (the first stamp wins).
            signals.stamped = try Checksum.fetchAll(db, sql: """
                WITH retired(sha1) AS (
                    SELECT previous_sha1 FROM temp.run_path_change WHERE sha1 IS NULL AND previous_sha1 IS NOT NULL
                    UNION SELECT anchor_sha1 FROM temp.run_path_change WHERE sha1 IS NULL AND anchor_sha1 IS NOT NULL
                    UNION SELECT previous_sha1 FROM temp.run_path_change
                        WHERE sha1 IS NOT NULL AND previous_sha1 IS NOT NULL AND previous_sha1 != sha1
                            AND anchor_sha1 IS NOT NULL AND anchor_sha1 != previous_sha1
                )
                SELECT r.sha1 FROM retired r
                WHERE NOT EXISTS (SELECT 1 FROM temp.run_current c WHERE c.sha1 = r.sha1)
                    AND NOT EXISTS (SELECT 1 FROM temp.run_protected p WHERE p.sha1 = r.sha1)
                    AND NOT EXISTS (SELECT 1 FROM main.reconcile_confirmed f
                                    WHERE f.source_id = :source AND f.sha1 = r.sha1)
                """, arguments: source).sorted()
            return signals
        }
    }

    /// Library content this source held and no longer holds, unprotected (see `AbsentContent`), with its stamps
    /// as they stand after this run: `stamped` are this run's, at `now`. After `scanSignals`.
    public func absentContent(stamped: [Checksum], at now: Date) async throws -> [AbsentContent] {
        let stampedNow = Set(stamped)
        return try await catalog.write { db in
            try AbsentContentRow.fetchAll(db, sql: """
                SELECT o.sha1,
                    (SELECT f.confirmed_at FROM main.reconcile_confirmed f
                     WHERE f.source_id = :source AND f.sha1 = o.sha1) AS confirmed_at,
                    EXISTS (SELECT 1 FROM main.reconcile_approval v
                            WHERE v.source_id = :source AND v.sha1 = o.sha1) AS approved
                FROM main.reconcile_observed o
                WHERE o.source_id = :source
                    AND NOT EXISTS (SELECT 1 FROM temp.run_current c WHERE c.sha1 = o.sha1)
                    AND EXISTS (SELECT 1 FROM main.asset a WHERE a.sha1 = o.sha1)
                    AND NOT EXISTS (SELECT 1 FROM main.source_file s WHERE s.sha1 = o.sha1 AND s.source_id != :source)
                    AND NOT EXISTS (SELECT 1 FROM main.reconcile_exclusion e
                                    WHERE e.source_id = :source AND e.sha1 = o.sha1)
                    AND NOT EXISTS (SELECT 1 FROM temp.run_protected p WHERE p.sha1 = o.sha1)
                """, arguments: ["source": sourceID]).compactMap { $0.content(stampedNow: stampedNow, at: now) }
        }
    }

    /// Content of the scan the library does not hold, sorted. After `classify`, whose groups already say which
    /// content the library lacks (a settled file's content is in the library); only files that could not be hashed,
    /// counted with their last checksum, are looked up.
    public func contentMissingFromLibrary() async throws -> [Checksum] {
        try await catalog.write { db in
            try Checksum.fetchAll(db, sql: """
                SELECT sha1 FROM temp.run_content WHERE in_library = 0
                UNION
                SELECT r.previous_sha1 FROM temp.run_file r
                WHERE r.failed = 1 AND r.previous_sha1 IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM main.asset a WHERE a.sha1 = r.previous_sha1)
                ORDER BY 1
                """)
        }
    }

    /// Where each of `checksums` last lived in the source, by the last healthy snapshot (for the trash journal).
    /// Content that is absent now is on a changed path, so `run_path_change` has it.
    public func lastSourcePaths(of checksums: [Checksum]) async throws -> [Checksum: String] {
        guard !checksums.isEmpty else { return [:] }
        return try await catalog.write { db in
            try db.execute(sql: """
                DROP TABLE IF EXISTS temp.run_wanted;
                CREATE TEMP TABLE run_wanted (sha1 TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
                """)
            let insert = try db.makeStatement(sql: "INSERT OR IGNORE INTO temp.run_wanted (sha1) VALUES (?)")
            for checksum in checksums { try insert.execute(arguments: [checksum]) }
            var paths: [Checksum: String] = [:]
            let rows = try PathChecksumRow.fetchCursor(db, sql: """
                SELECT k.previous_sha1 AS sha1, MIN(k.path) AS relative_path FROM temp.run_path_change k
                JOIN temp.run_wanted w ON w.sha1 = k.previous_sha1 GROUP BY k.previous_sha1
                """)
            while let row = try rows.next() {
                if let checksum = Checksum(hex: row.sha1) { paths[checksum] = row.relativePath }
            }
            return paths
        }
    }
}

extension RunFileTable {
    /// Fills `run_path_change` with one pass over the scan, the snapshot and the anchors side by side, each read in
    /// path order (their keys' order): a row for every path where the three do not all agree. Looking each scanned
    /// path up in the other two instead was far slower on a million files (two B-tree searches a path, mostly
    /// missing SQLite's page cache); the pass reads each table once.
    /// Returns how many rows the scan and the snapshot had.
    static func listChangedPaths(sourceID: Int64, _ db: Database) throws -> (current: Int, previous: Int) {
        let streams = try [
            db.makeStatement(sql: "SELECT path, sha1 FROM temp.run_current ORDER BY path"),
            db.makeStatement(sql: """
                SELECT relative_path, sha1 FROM main.reconcile_healthy_snapshot WHERE source_id = ? ORDER BY relative_path
                """),
            db.makeStatement(sql: """
                SELECT relative_path, sha1 FROM main.reconcile_anchor WHERE source_id = ? ORDER BY relative_path
                """),
        ]
        let insert = try db.makeStatement(sql: """
            INSERT INTO temp.run_path_change (path, sha1, previous_sha1, anchor_sha1) VALUES (?, ?, ?, ?)
            """)
        for statement in streams.dropFirst() {
            try check(sqlite3_bind_int64(statement.sqliteStatement, 1, sourceID), db, statement)
        }
        var live = [Bool](repeating: false, count: 3)
        var rows = [0, 0, 0]
        func step(_ index: Int) throws {
            let code = sqlite3_step(streams[index].sqliteStatement)
            guard code == SQLITE_ROW || code == SQLITE_DONE else { return try check(code, db, streams[index]) }
            live[index] = code == SQLITE_ROW
            if live[index] { rows[index] += 1 }
        }
        for index in 0..<3 { try step(index) }

        /// Column `column` of stream `index`'s current row as bytes (valid until that stream steps again).
        func text(_ index: Int, _ column: Int32) -> UnsafeRawBufferPointer {
            let raw = streams[index].sqliteStatement
            let count = Int(sqlite3_column_bytes(raw, column))
            return UnsafeRawBufferPointer(start: sqlite3_column_text(raw, column), count: count)
        }
        /// SQLite's BINARY order: bytes compared, then the shorter first.
        func order(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
            let common = min(a.count, b.count)
            if common > 0, let left = a.baseAddress, let right = b.baseAddress {
                let result = memcmp(left, right, common)
                if result != 0 { return Int(result) }
            }
            return a.count - b.count
        }
        let raw = insert.sqliteStatement
        func bind(_ position: Int32, _ bytes: UnsafeRawBufferPointer?) throws {
            let code: Int32
            if let bytes, let base = bytes.baseAddress {
                code = CSQLite_bind_text_copy(raw, position, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
            } else if bytes != nil {
                code = CSQLite_bind_text_copy(raw, position, "", 0)
            } else {
                code = sqlite3_bind_null(raw, position)
            }
            try check(code, db, insert)
        }

        // Reused across rows: a million-file scan passes here three million times, so nothing is allocated per row.
        var holds = [false, false, false]
        while live.contains(true) {
            // The smallest path among the streams' current rows, and which streams hold it.
            var first = -1
            for index in 0..<3 where live[index] {
                if first < 0 || order(text(index, 0), text(first, 0)) < 0 { first = index }
            }
            for index in 0..<3 { holds[index] = live[index] && order(text(index, 0), text(first, 0)) == 0 }
            func sum(_ index: Int) -> UnsafeRawBufferPointer? { holds[index] ? text(index, 1) : nil }
            let agree = holds[0] && holds[1] && holds[2]
                && order(text(0, 1), text(1, 1)) == 0 && order(text(0, 1), text(2, 1)) == 0
            if !agree {
                try check(sqlite3_reset(raw), db, insert)
                try bind(1, text(first, 0))
                try bind(2, sum(0))
                try bind(3, sum(1))
                try bind(4, sum(2))
                let code = sqlite3_step(raw)
                if code != SQLITE_DONE { try check(code, db, insert) }
            }
            for index in 0..<3 where holds[index] { try step(index) }
        }
        try check(sqlite3_reset(raw), db, insert)
        for statement in streams { try check(sqlite3_reset(statement.sqliteStatement), db, statement) }
        return (rows[0], rows[1])
    }
}

extension RunFileTable {
    /// Everything a sync learned, in one transaction, from the run tables `compareWithHealthySnapshot` built:
    /// - observed grows by the scan's content. Only changed paths are read: the content of a path that agrees with
    ///   the last healthy snapshot was observed when that snapshot was taken, in the same transaction.
    /// - a path with no edit anchor takes its snapshot content as anchor, else its current content;
    /// - `sync.changes` unstamps what came back and stamps what this run confirmed;
    /// - when the scan was healthy: gone paths' anchors are released, the snapshot becomes the scan (only its
    ///   changed rows are written), and the source's facts move on;
    /// - the waiting items for `pending list` are replaced.
    public func commit(_ sync: SyncRecord, currentFiles: Int) async throws {
        let sourceID = self.sourceID
        try await catalog.write { db in
            let source: StatementArguments = ["source": sourceID]
            try db.execute(sql: """
                INSERT OR IGNORE INTO main.reconcile_observed (source_id, sha1)
                    SELECT DISTINCT :source, sha1 FROM temp.run_path_change WHERE sha1 IS NOT NULL;
                INSERT OR IGNORE INTO main.reconcile_anchor (source_id, relative_path, sha1)
                    SELECT :source, path, COALESCE(previous_sha1, sha1) FROM temp.run_path_change
                    WHERE sha1 IS NOT NULL AND anchor_sha1 IS NULL;
                """, arguments: source)
            try ReconcileStore.apply(sync.changes, sourceID: sourceID, runID: sync.runID, db)
            if sync.advanceSnapshot {
                try db.execute(sql: """
                    DELETE FROM main.reconcile_anchor WHERE source_id = :source AND relative_path IN
                        (SELECT path FROM temp.run_path_change WHERE sha1 IS NULL AND anchor_sha1 IS NOT NULL);
                    DELETE FROM main.reconcile_healthy_snapshot WHERE source_id = :source AND relative_path IN
                        (SELECT path FROM temp.run_path_change WHERE sha1 IS NULL AND previous_sha1 IS NOT NULL);
                    INSERT OR REPLACE INTO main.reconcile_healthy_snapshot (source_id, relative_path, sha1)
                        SELECT :source, path, sha1 FROM temp.run_path_change
                        WHERE sha1 IS NOT NULL AND previous_sha1 IS NOT sha1;
                    """, arguments: source)
            }
            try ReconcileStore.recordSync(sync, sourceID: sourceID, healthyFileCount: currentFiles, db)
        }
    }
}
