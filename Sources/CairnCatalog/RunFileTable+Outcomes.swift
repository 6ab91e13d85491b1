import CairnCore
import Foundation
import GRDB

/// What became of the run's files: the pipeline's outcome per piece of content, and a line or a count per file.
extension RunFileTable {
    /// What the pipeline made of one piece of content, as stored for the end-of-run report.
    public struct ContentOutcome: Sendable, Equatable {
        public var checksum: Checksum
        public var path: String
        public var outcome: String
        public var phase: String?
        public var reason: FailureReason?

        public init(checksum: Checksum, path: String, outcome: String, phase: String? = nil, reason: FailureReason? = nil) {
            self.checksum = checksum
            self.path = path
            self.outcome = outcome
            self.phase = phase
            self.reason = reason
        }
    }

    /// One file's line at the end of the run, before it is turned into a report line.
    public struct FileLine: Sendable {
        public var path: String
        public var checksum: Checksum?
        public var hashedThisRun: Bool
        /// Hashing failed: no checksum.
        public var hashFailed: Bool
        /// The first file holding its content.
        public var isFirst: Bool
        public var inLibrary: Bool
        /// The pipeline's outcome for its content, on the first file only.
        public var outcome: ContentOutcome?
    }

    /// Stores what the pipeline made of some content (the last word for a checksum wins). Content in the library
    /// (an item resumed from an earlier run) is grouped again with all its files, settled ones included, so the
    /// outcome goes to its first file; `classify` left such content ungrouped, or grouped without its settled files.
    public func recordOutcomes(_ outcomes: [ContentOutcome]) throws {
        guard !outcomes.isEmpty else { return }
        try catalog.pool.write { db in
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO temp.run_outcome (sha1, path, outcome, phase, operation, reason)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
            // Grouped by `classify` with all its files: content new to the library, which has no settled file.
            let groupedWhole = try db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM temp.run_content WHERE sha1 = ? AND in_library = 0)
                """)
            var indexed = false
            for outcome in outcomes {
                let hex = outcome.checksum.hex
                if try Bool.fetchOne(groupedWhole, arguments: [hex]) != true {
                    if !indexed {
                        try db.execute(sql: "CREATE INDEX IF NOT EXISTS temp.run_file_sha1 ON run_file(sha1)")
                        indexed = true
                    }
                    try db.execute(sql: """
                        INSERT OR REPLACE INTO temp.run_content \(Self.groupColumns) \(Self.groups(where: "r.sha1 = ?"))
                        """, arguments: [hex])
                }
                try insert.execute(arguments: [
                    hex, outcome.path, outcome.outcome, outcome.phase, outcome.reason?.operation, outcome.reason?.reason,
                ])
            }
        }
    }

    /// How many files end each way, as `forEachFileLine` would sort them, counted in SQL with no line per file:
    /// the pipeline's outcomes by kind (`imported`, `failed` ...), and `duplicate`, `unchanged` and `unfinished`
    /// for the files it did not handle. Files whose hashing failed are not counted.
    public func outcomeCounts() throws -> [String: Int] {
        try catalog.pool.write { db in
            var counts: [String: Int] = [:]
            let handled = try OutcomeCountRow.fetchCursor(
                db, sql: "SELECT outcome, COUNT(*) AS files FROM temp.run_outcome GROUP BY outcome")
            while let row = try handled.next() { counts[row.outcome, default: 0] += row.files }
            // The first file of content with an outcome, or of new content never reached, is not counted below.
            if let row = try UnhandledCountsRow.fetchOne(db, sql: """
                SELECT
                    TOTAL(CASE WHEN o.sha1 IS NOT NULL OR c.in_library = 0 THEN c.hashed_files - c.first_hashed
                               ELSE c.hashed_files END) AS duplicate,
                    TOTAL(CASE WHEN o.sha1 IS NOT NULL OR c.in_library = 0
                               THEN (c.files - c.hashed_files) - (1 - c.first_hashed)
                               ELSE c.files - c.hashed_files END) AS unchanged,
                    COUNT(*) FILTER (WHERE o.sha1 IS NULL AND c.in_library = 0) AS unfinished
                FROM temp.run_content c LEFT JOIN temp.run_outcome o ON o.sha1 = c.sha1
                """) {
                counts["duplicate", default: 0] += Int(row.duplicate)
                counts["unchanged", default: 0] += Int(row.unchanged)
                counts["unfinished", default: 0] += row.unfinished
            }
            counts["unchanged", default: 0] += try Self.ungroupedFiles(db)

            return counts.filter { $0.value > 0 }
        }
    }

    /// Every file of the walk, in path order, with what became of it; then the content the pipeline handled
    /// that no file of this walk holds (items resumed from earlier runs of other sources), `isFirst` set.
    public func forEachFileLine(_ body: (FileLine) throws -> Void) throws {
        try catalog.pool.write { db in
            let rows = try FileLineRow.fetchCursor(db, sql: """
                SELECT r.path, r.sha1, r.hashed, r.failed, r.id = c.first_id AS is_first, c.in_library,
                    \(Self.outcomeColumns)
                FROM temp.run_file r
                LEFT JOIN temp.run_content c ON c.sha1 = r.sha1
                LEFT JOIN temp.run_outcome o ON o.sha1 = r.sha1 AND r.id = c.first_id
                ORDER BY r.id
                """)
            while let row = try rows.next() { try body(row.line) }
            let others = try OutcomeColumns.fetchCursor(db, sql: """
                SELECT \(Self.outcomeColumns) FROM temp.run_outcome o
                WHERE NOT EXISTS (SELECT 1 FROM temp.run_content c WHERE c.sha1 = o.sha1) ORDER BY o.path
                """)
            while let row = try others.next() {
                guard let outcome = row.contentOutcome else { continue }
                try body(FileLine(path: outcome.path, checksum: outcome.checksum, hashedThisRun: false, hashFailed: false,
                                  isFirst: true, inLibrary: false, outcome: outcome))
            }
        }
    }

    // MARK: Rows

    /// A stored outcome's columns, named apart from the walk's own `sha1` and `path` (read by `OutcomeColumns`).
    private static let outcomeColumns = """
        o.sha1 AS outcome_sha1, o.path AS outcome_path, o.outcome, o.phase AS outcome_phase,
        o.operation AS outcome_operation, o.reason AS outcome_reason
        """

}
