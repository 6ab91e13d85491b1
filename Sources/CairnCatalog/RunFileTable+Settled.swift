import GRDB

/// The walk's settled files: unchanged, their content in the library. They get no `run_file` row; the walk notes
/// runs of them (`run_settled`), each a range of the source's snapshot whose rows are all settled files, numbered in
/// path order from the run's first. The queries that need every file of the walk read `run_file` and these rows.
extension RunFileTable {
    /// Every settled file's snapshot row (`s`) beside its run (`g`), for a full read of the runs.
    var settledFiles: String {
        """
        temp.run_settled g JOIN main.source_file s
            ON s.source_id = \(sourceID) AND s.relative_path >= g.first_path AND s.relative_path <= g.last_path
        """
    }

    /// A settled file's number in a full read of `settledFiles`: its run's first id plus its place in the run.
    static let settledFileID = "g.first_id - 1 + ROW_NUMBER() OVER (PARTITION BY g.first_path ORDER BY s.relative_path)"

    /// Whether the snapshot path `path` (an SQL expression) is a settled file of the walk: inside the run that
    /// starts last at or before it.
    static func isSettled(_ path: String) -> String {
        """
        COALESCE((SELECT g.last_path >= \(path) FROM temp.run_settled g WHERE g.first_path <= \(path)
                  ORDER BY g.first_path DESC LIMIT 1), 0)
        """
    }

    /// The number of the settled file at snapshot row `s` (an alias of `main.source_file`): its run's first id
    /// plus the snapshot rows before it in the run (at most `SettledRun.maxCount`).
    func settledID(of alias: String) -> String {
        """
        (SELECT g.first_id + (SELECT COUNT(*) FROM main.source_file x WHERE x.source_id = \(sourceID)
                                  AND x.relative_path >= g.first_path AND x.relative_path < \(alias).relative_path)
         FROM temp.run_settled g WHERE g.first_path <= \(alias).relative_path ORDER BY g.first_path DESC LIMIT 1)
        """
    }

    /// Splits the run holding snapshot path `path`, if one does, so that none holds it: a file handed over out of
    /// order whose path is new to the snapshot goes into it once hashed, between rows a run numbered.
    static func splitSettledRun(at path: String, sourceID: Int64, in db: Database) throws {
        guard let run = try Row.fetchOne(db, sql: """
            SELECT first_path, last_path, first_id FROM temp.run_settled WHERE first_path <= ?
            ORDER BY first_path DESC LIMIT 1
            """, arguments: [path]) else { return }
        let first: String = run["first_path"], last: String = run["last_path"], firstID: Int64 = run["first_id"]
        let before = try String.fetchAll(db, sql: """
            SELECT relative_path FROM main.source_file WHERE source_id = ? AND relative_path >= ? AND relative_path < ?
            ORDER BY relative_path
            """, arguments: [sourceID, first, path])
        let after = try String.fetchAll(db, sql: """
            SELECT relative_path FROM main.source_file WHERE source_id = ? AND relative_path > ? AND relative_path <= ?
            ORDER BY relative_path
            """, arguments: [sourceID, path, last])
        guard !after.isEmpty else { return }  // the run ends before `path`
        try db.execute(sql: "DELETE FROM temp.run_settled WHERE first_path = ?", arguments: [first])
        let insert = "INSERT INTO temp.run_settled (first_path, last_path, first_id) VALUES (?, ?, ?)"
        if let lastBefore = before.last {
            try db.execute(sql: insert, arguments: [first, lastBefore, firstID])
        }
        try db.execute(sql: insert, arguments: [after[0], last, firstID + Int64(before.count)])
    }
}
