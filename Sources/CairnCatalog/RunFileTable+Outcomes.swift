import CairnCore
import Foundation
import GRDB

/// What became of the run's files. The run tables keep only which items the lanes handled (`run_item`); what
/// became of each is read from where `import_item` says it stands, through `ItemState`'s codec and
/// `FileOutcome(state:isDuplicate:leftUnfinished:)`, the scheduler's own derivation.
extension RunFileTable {
    /// Notes the items the lanes handled (the scheduler's lines, by checksum), and whether the run left each
    /// unfinished. Content in the library (an item resumed from an earlier run) is grouped again with all its
    /// files, settled ones included, so its outcome goes to its first file; `classify` left such content
    /// ungrouped, or grouped without its settled files.
    public func recordItems(_ lines: [FileOutcomeEntry]) async throws {
        let handled = lines.compactMap { line in line.checksum.map { ($0, line.outcome.kind == .unfinished) } }
        guard !handled.isEmpty else { return }
        try await catalog.write { db in
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO temp.run_item (sha1, left_unfinished) VALUES (?, ?)
                """)
            // Grouped by `classify` with all its files: content new to the library, which has no settled file.
            let groupedWhole = try db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM temp.run_content WHERE sha1 = ? AND in_library = 0)
                """)
            // The content's files: its rows, and its settled files (found by the snapshot's checksum index).
            let groupWithSettledFiles = """
                SELECT r.sha1, MIN(r.id), r.size, r.hashed, COUNT(*) AS files, SUM(r.hashed) AS hashed_files,
                    EXISTS (SELECT 1 FROM main.asset a WHERE a.sha1 = r.sha1) AS in_library
                FROM (SELECT id, sha1, size, hashed FROM temp.run_file WHERE sha1 = ?1
                      UNION ALL
                      SELECT \(settledID(of: "s")), s.sha1, s.size, 0 FROM main.source_file s
                      WHERE s.source_id = \(sourceID) AND s.sha1 = ?1 AND \(Self.isSettled("s.relative_path"))) r
                GROUP BY r.sha1
                """
            var indexed = false
            for (checksum, leftUnfinished) in handled {
                let hex = checksum.hex
                if try Bool.fetchOne(groupedWhole, arguments: [hex]) != true {
                    if !indexed {
                        try db.execute(sql: "CREATE INDEX IF NOT EXISTS temp.run_file_sha1 ON run_file(sha1)")
                        indexed = true
                    }
                    try db.execute(sql: """
                        INSERT OR REPLACE INTO temp.run_content \(Self.groupColumns) \(groupWithSettledFiles)
                        """, arguments: [hex])
                }
                try insert.execute(arguments: [hex, leftUnfinished])
            }
        }
    }

    /// How many files end each way, as `outcomes` sorts them, counted in SQL with no line per file: the
    /// handled items by where they stand (grouped by their state's columns), and for the rest of the walk, hashing
    /// failures, files left unread, duplicates, unchanged files and new content never reached.
    public func outcomeCounts() async throws -> [FileOutcome.Kind: Int] {
        let settled = walk.withLock { $0.settled }
        return try await catalog.write { db in
            var counts: [FileOutcome.Kind: Int] = [:]
            let handled = try HandledItemsRow.fetchCursor(db, sql: """
                SELECT \(Self.itemColumns), COUNT(*) AS files
                FROM temp.run_item ri JOIN main.import_item i ON i.sha1 = ri.sha1
                GROUP BY i.state, i.phase, i.operation, i.reason, i.category, i.attempts, i.retryable, i.duplicate,
                    ri.left_unfinished
                """)
            while let row = try handled.next() { counts[row.item.outcome.kind, default: 0] += row.files }
            if let row = try WalkCountsRow.fetchOne(db, sql: """
                SELECT COUNT(*) FILTER (WHERE failed = 1) AS failed,
                    COUNT(*) FILTER (WHERE failed = 0 AND sha1 IS NULL) AS unread
                FROM temp.run_file INDEXED BY run_file_unsettled WHERE settled = 0
                """) {
                counts[.failed, default: 0] += row.failed
                counts[.unfinished, default: 0] += row.unread
            }
            // The first file of handled content, or of new content never reached, is not counted below.
            if let row = try UnhandledCountsRow.fetchOne(db, sql: """
                SELECT
                    TOTAL(CASE WHEN ri.sha1 IS NOT NULL OR c.in_library = 0 THEN c.hashed_files - c.first_hashed
                               ELSE c.hashed_files END) AS duplicate,
                    TOTAL(CASE WHEN ri.sha1 IS NOT NULL OR c.in_library = 0
                               THEN (c.files - c.hashed_files) - (1 - c.first_hashed)
                               ELSE c.files - c.hashed_files END) AS unchanged,
                    COUNT(*) FILTER (WHERE ri.sha1 IS NULL AND c.in_library = 0) AS unfinished
                FROM temp.run_content c LEFT JOIN temp.run_item ri ON ri.sha1 = c.sha1
                """) {
                counts[.duplicate, default: 0] += Int(row.duplicate)
                counts[.unchanged, default: 0] += Int(row.unchanged)
                counts[.unfinished, default: 0] += row.unfinished
            }
            counts[.unchanged, default: 0] += try Self.ungroupedFiles(db, settled: settled)
            return counts.filter { $0.value > 0 }
        }
    }

    /// Every file of the walk, in path order, with what became of it; then the handled items that no file of this
    /// walk holds (items resumed from earlier runs of other sources). For the report; a caller that only counts them
    /// asks `outcomeCounts`, which holds no line per file.
    public func outcomes() async throws -> [FileOutcomeEntry] {
        try await catalog.write { db in
            var entries: [FileOutcomeEntry] = []
            let files = try WalkOutcomeRow.fetchCursor(db, sql: """
                SELECT r.path, r.sha1 AS walk_sha1, r.hashed, r.failed, r.failure_operation, r.failure_reason,
                  r.failure_category,                     r.id = c.first_id AS is_first, c.in_library, \(Self.itemColumns)
                FROM (SELECT id, path, sha1, hashed, failed, failure_operation, failure_reason, failure_category
                      FROM temp.run_file
                      UNION ALL
                      SELECT \(Self.settledFileID), s.relative_path, s.sha1, 0, 0, NULL, NULL, NULL
                      FROM \(settledFiles)) r
                LEFT JOIN temp.run_content c ON c.sha1 = r.sha1
                LEFT JOIN temp.run_item ri ON ri.sha1 = r.sha1 AND r.id = c.first_id
                LEFT JOIN main.import_item i ON i.sha1 = ri.sha1
                ORDER BY r.id
                """)
            while let row = try files.next() { entries.append(row.entry) }
            let others = try HandledItemsRow.fetchCursor(db, sql: """
                SELECT \(Self.itemColumns), i.relative_path, i.sha1 FROM temp.run_item ri
                JOIN main.import_item i ON i.sha1 = ri.sha1
                WHERE NOT EXISTS (SELECT 1 FROM temp.run_content c WHERE c.sha1 = ri.sha1) ORDER BY i.relative_path
                """)
            while let row = try others.next() {
                entries.append(FileOutcomeEntry(path: row.relativePath ?? "", checksum: row.checksum,
                                                outcome: row.item.outcome))
            }
            return entries
        }
    }

    /// The handled items that failed this run, in plan order: the lanes' failures for the run's summary.
    public func failedItems() async throws -> [ImportFailure] {
        try await catalog.write { db in
            try HandledItemsRow.fetchAll(db, sql: """
                SELECT \(Self.itemColumns), i.relative_path FROM temp.run_item ri
                JOIN main.import_item i ON i.sha1 = ri.sha1
                WHERE ri.left_unfinished = 0 AND i.state = ? ORDER BY i.id
                """, arguments: [ItemState.Name.failed.rawValue]).compactMap(\.failure)
        }
    }

    /// A handled item's columns: its state (in `ItemState`'s own column names), whether the transfer found it a
    /// duplicate, and whether the run left it unfinished.
    package static let itemColumns = """
        i.state, i.phase, i.operation, i.reason, i.category, i.attempts, i.retryable, i.duplicate, ri.left_unfinished
        """
}
