import CSQLite
import CairnCore
import GRDB

/// The walk's rows into `run_file`, bound straight to SQLite. Through GRDB's arguments (a boxed value per column,
/// converted again to bind it) the binding cost more than SQLite's insert and snapshot lookup together, on the
/// thread that a rescan of a million files waits for.
extension RunFileTable {
    /// Rows per statement: a statement per row cost more than the insert itself, even bound directly.
    static let walkRowsPerStatement = 64

    /// The insert of `rows` walk rows, each matched against the snapshot by path: unchanged (same fingerprint)
    /// takes the snapshot's checksum, and is settled when the snapshot says its content is in the library. Each
    /// row brings its id (the walk's order), so no sort is needed to keep that order.
    static func walkInsertSQL(rows: Int) -> String {
        """
        INSERT INTO temp.run_file (id, path, device, inode, size, mtime_ns, kind, known, previous_sha1, sha1, settled)
        SELECT column7, column1, column2, column3, column4, column5, column6, known, previous_sha1,
            CASE WHEN unchanged THEN previous_sha1 END, unchanged AND in_library
        FROM (
            SELECT v.*, s.relative_path IS NOT NULL AS known, s.sha1 AS previous_sha1,
                COALESCE(s.in_library = 1, 0) AS in_library,
                COALESCE(s.device = v.column2 AND s.inode = v.column3 AND s.size = v.column4
                         AND s.mtime_ns = v.column5 AND s.sha1 IS NOT NULL, 0) AS unchanged
            FROM (VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", "))) AS v
            LEFT JOIN main.source_file s ON s.source_id = ?\(rows * 7 + 1) AND s.relative_path = v.column1
        )
        """
    }

    /// Runs `statement` (from `walkInsertSQL(rows: files.count)`) for `files`, numbered from `firstID`, in the
    /// caller's transaction.
    static func insertWalkRows(_ files: ArraySlice<SourceFile>, firstID: Int64, sourceID: Int64,
                               with statement: Statement, in db: Database) throws {
        let raw = statement.sqliteStatement
        try check(sqlite3_reset(raw), db, statement)
        var index: Int32 = 1
        func bind(_ value: Int64) throws {
            try check(sqlite3_bind_int64(raw, index, value), db, statement)
            index += 1
        }
        func bind(_ text: String) throws {
            var text = text
            let code: Int32 = text.withUTF8 { bytes in
                guard let base = bytes.baseAddress else { return CSQLite_bind_text_copy(raw, index, "", 0) }
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    CSQLite_bind_text_copy(raw, index, $0, Int32(bytes.count))
                }
            }
            try check(code, db, statement)
            index += 1
        }
        for (order, file) in files.enumerated() {
            try bind(file.relativePath)
            try bind(Int64(bitPattern: file.fingerprint.device))
            try bind(Int64(bitPattern: file.fingerprint.inode))
            try bind(file.fingerprint.size)
            try bind(file.fingerprint.modificationTimeNanoseconds)
            try bind(file.kind.rawValue)
            try bind(firstID + Int64(order))
        }
        try bind(sourceID)
        let code = sqlite3_step(raw)
        if code != SQLITE_DONE { try check(code, db, statement) }
        try check(sqlite3_reset(raw), db, statement)
    }

    /// Every SQLite result code of the run tables' raw statements goes through here.
    static func check(_ code: Int32, _ db: Database, _ statement: Statement) throws {
        guard code != SQLITE_OK else { return }
        throw DatabaseError(resultCode: ResultCode(rawValue: code),
                            message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
    }
}
