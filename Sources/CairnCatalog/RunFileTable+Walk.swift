import CSQLite
import CairnCore
import GRDB

/// The walk's rows into `run_file`, each matched against the snapshot by a merge: the walk hands its files over in
/// bytewise path order, which is the order of `source_file`'s key, so each batch reads the snapshot's rows of its
/// path range once, in order, beside it, rather than looking every file up in the snapshot's tree. Rows are bound
/// straight to SQLite (through GRDB's arguments, a boxed value per column converted again to bind it, the binding
/// cost more than the insert). The merge also counts what `matchSnapshot` reports, so no query reads a rescan's
/// million rows back to count them.
///
/// A settled file (unchanged, its content in the library) gets no row: its snapshot row already says all a row
/// would, so the walk notes only runs of them (`run_settled`, see `RunFileTable+Settled.swift`). Inserting a row per
/// settled file was most of a rescan's time beyond the stat of each file.
extension RunFileTable {
    /// Rows per insert statement: a statement per row cost more than the insert itself, even bound directly.
    static let walkRowsPerStatement = 64
    static let walkColumns = 11

    /// The insert of a statement's rows: rows left unbound (NULL) are dropped, so a batch whose settled files get
    /// no row runs its last statement part full.
    static let walkInsertSQL: String = {
        let row = "(" + Array(repeating: "?", count: walkColumns).joined(separator: ", ") + ")"
        return """
            INSERT INTO temp.run_file (id, path, device, inode, size, mtime_ns, kind, known, previous_sha1, sha1, settled)
            SELECT * FROM (VALUES \(Array(repeating: row, count: walkRowsPerStatement).joined(separator: ", ")))
            WHERE column1 IS NOT NULL
            """
    }()

    /// The snapshot's rows of the source in a path range, in the order of its key.
    static let snapshotRangeSQL = """
        SELECT relative_path, device, inode, size, mtime_ns, sha1, in_library FROM main.source_file
        WHERE source_id = ? AND relative_path > ? AND relative_path <= ? ORDER BY relative_path
        """
    /// One path of the snapshot, for a file the walk handed over out of order.
    static let snapshotRowSQL = """
        SELECT relative_path, device, inode, size, mtime_ns, sha1, in_library FROM main.source_file
        WHERE source_id = ? AND relative_path = ?
        """

    /// Inserts `files` (numbered from `firstID`) in the caller's transaction, matching each against the snapshot
    /// rows of the range after the last batch's greatest path; counts the match into `walk`.
    static func insertWalkRows(_ files: [SourceFile], firstID: Int64, sourceID: Int64, walk: inout WalkMatch,
                               in db: Database) throws {
        let range = try db.cachedStatement(sql: snapshotRangeSQL)
        let single = try db.cachedStatement(sql: snapshotRowSQL)
        // The loops index `files` rather than binding each element, which copied each file (its path retained and
        // released) on the walk's thread.
        var upper = walk.upperPath
        for index in files.indices where upper.map({ PathOrder.precedes($0, files[index].relativePath) }) ?? true {
            upper = files[index].relativePath
        }
        var snapshot = SnapshotCursor(statement: range, db: db)
        try snapshot.open(sourceID: sourceID, after: walk.upperPath ?? "", through: upper ?? "")
        var rows = WalkRowWriter(db: db)
        var previousPath = walk.upperPath
        for index in files.indices {
            let path = files[index].relativePath
            let inOrder = previousPath.map { PathOrder.precedes($0, path) } ?? true
            var row: SnapshotCursor?
            var passed = 0
            if inOrder {
                previousPath = path
                passed = try snapshot.advance(to: path)
                walk.passedRows += passed
                if snapshot.isAt(path) { row = snapshot }
            } else {
                // Never from this project's walk: a path at or before one already handed over is looked up alone.
                var alone = SnapshotCursor(statement: single, db: db)
                try alone.open(sourceID: sourceID, path: path)
                if alone.isAt(path) {
                    row = alone
                    walk.foundAlone += 1
                }
            }
            let matched = row?.matches(files[index].fingerprint) ?? (unchanged: false, inLibrary: false)
            let settled = matched.unchanged && matched.inLibrary
            let id = firstID + Int64(index)
            if settled, inOrder {
                // A snapshot row passed since the last file ends a run: a run's rows are consecutive in the snapshot.
                if passed > 0 { try walk.closeSettledRun(in: db) }
                try walk.extendSettledRun(path: path, id: id, in: db)
            } else {
                try walk.closeSettledRun(in: db)
                if !inOrder { try splitSettledRun(at: path, sourceID: sourceID, in: db) }
                try rows.add(files[index], id: id, snapshot: row, unchanged: matched.unchanged, settled: settled)
            }
            if inOrder, row != nil { try snapshot.step() }
            walk.count(size: files[index].fingerprint.size, unchanged: matched.unchanged, settled: settled)
        }
        let passedAtEnd = try snapshot.advance(to: nil)
        walk.passedRows += passedAtEnd
        if passedAtEnd > 0 { try walk.closeSettledRun(in: db) }
        try walk.saveSettledRun(in: db)
        try rows.finish()
        try check(sqlite3_reset(range.sqliteStatement), db, range)
        try check(sqlite3_reset(single.sqliteStatement), db, single)
        walk.upperPath = upper
    }

    /// Every SQLite result code of the run tables' raw statements goes through here.
    static func check(_ code: Int32, _ db: Database, _ statement: Statement) throws {
        guard code != SQLITE_OK, code != SQLITE_ROW, code != SQLITE_DONE else { return }
        throw DatabaseError(resultCode: ResultCode(rawValue: code),
                            message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
    }
}

/// What the walk has matched so far: the counts `matchSnapshot` reports, and where in the snapshot the merge stands.
struct WalkMatch: Sendable {
    var files = 0
    var bytes: Int64 = 0
    var toHash = 0
    var bytesToHash: Int64 = 0
    /// Files unchanged with their content in the library: nothing to do for them.
    var settled = 0
    /// Snapshot rows up to `upperPath` that the merge passed without a file of their path.
    var passedRows = 0
    /// Files handed over out of order whose rows were found alone: rows among `passedRows`.
    var foundAlone = 0
    /// The greatest path handed over: the next batch's snapshot range starts after it.
    var upperPath: String?
    /// The run of settled files the walk is in, not yet closed (saved at the end of each batch).
    var settledRun: SettledRun?

    /// Adds a settled file, in order and with no snapshot row passed since the run's last, to the open run, or
    /// starts one (closing a full one).
    mutating func extendSettledRun(path: String, id: Int64, in db: Database) throws {
        if let run = settledRun, run.count < SettledRun.maxCount {
            settledRun?.lastPath = path
            settledRun?.count += 1
            return
        }
        try closeSettledRun(in: db)
        settledRun = SettledRun(firstPath: path, lastPath: path, firstID: id, count: 1)
    }

    /// Saves the open run and starts none.
    mutating func closeSettledRun(in db: Database) throws {
        try saveSettledRun(in: db)
        settledRun = nil
    }

    /// Saves the open run as it stands (a later batch may still extend it).
    func saveSettledRun(in db: Database) throws {
        guard let run = settledRun else { return }
        try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO temp.run_settled (first_path, last_path, first_id) VALUES (?, ?, ?)
            """).execute(arguments: [run.firstPath, run.lastPath, run.firstID])
    }

    mutating func count(size: Int64, unchanged: Bool, settled: Bool) {
        files += 1
        bytes += size
        if !unchanged {
            toHash += 1
            bytesToHash += size
        }
        if settled { self.settled += 1 }
    }
}

/// Settled files handed over one after another whose snapshot rows are consecutive too: the rows of the source's
/// snapshot from `firstPath` through `lastPath`, numbered from `firstID` in path order.
struct SettledRun: Sendable {
    /// Files a run holds at most, so a file's number is found by counting at most this many snapshot rows.
    static let maxCount = 64

    var firstPath: String
    var lastPath: String
    var firstID: Int64
    var count: Int
}

/// A snapshot row under a raw statement: its path compared in place, its checksum bound from SQLite's own buffer.
private struct SnapshotCursor {
    let statement: Statement
    let db: Database
    let raw: OpaquePointer
    private(set) var hasRow = false

    init(statement: Statement, db: Database) {
        self.statement = statement
        self.db = db
        raw = statement.sqliteStatement
    }

    mutating func open(sourceID: Int64, after lower: String, through upper: String) throws {
        try RunFileTable.check(sqlite3_reset(raw), db, statement)
        try RunFileTable.check(sqlite3_bind_int64(raw, 1, sourceID), db, statement)
        try bindText(lower, at: 2)
        try bindText(upper, at: 3)
        try step()
    }

    mutating func open(sourceID: Int64, path: String) throws {
        try RunFileTable.check(sqlite3_reset(raw), db, statement)
        try RunFileTable.check(sqlite3_bind_int64(raw, 1, sourceID), db, statement)
        try bindText(path, at: 2)
        try step()
    }

    private func bindText(_ text: String, at index: Int32) throws {
        try RunFileTable.check(bindCopy(text, raw, index), db, statement)
    }

    mutating func step() throws {
        let code = sqlite3_step(raw)
        try RunFileTable.check(code, db, statement)
        hasRow = code == SQLITE_ROW
    }

    /// The current row's path against `path` (`nil`: past every path).
    private func order(against target: String?) -> Int32 {
        guard let target else { return -1 }
        let count = Int(sqlite3_column_bytes(raw, 0))
        let bytes = UnsafeBufferPointer(start: sqlite3_column_text(raw, 0), count: count)
        if let order = target.utf8.withContiguousStorageIfAvailable({ PathOrder.compare(bytes, $0) }) { return order }
        var copy = target
        return copy.withUTF8 { PathOrder.compare(bytes, $0) }
    }

    /// Steps past the rows before `path` (every row left, for nil); returns how many it passed.
    mutating func advance(to path: String?) throws -> Int {
        var passed = 0
        while hasRow, order(against: path) < 0 {
            passed += 1
            try step()
        }
        return passed
    }

    /// Whether the current row is `path`'s.
    func isAt(_ path: String) -> Bool { hasRow && order(against: path) == 0 }

    /// Whether the file's fingerprint is the row's (with a checksum), and whether the row says its content is in
    /// the library.
    func matches(_ fingerprint: FileFingerprint) -> (unchanged: Bool, inLibrary: Bool) {
        let unchanged = sqlite3_column_int64(raw, 1) == Int64(bitPattern: fingerprint.device)
            && sqlite3_column_int64(raw, 2) == Int64(bitPattern: fingerprint.inode)
            && sqlite3_column_int64(raw, 3) == fingerprint.size
            && sqlite3_column_int64(raw, 4) == fingerprint.modificationTimeNanoseconds
            && sqlite3_column_type(raw, 5) != SQLITE_NULL
        return (unchanged, sqlite3_column_int64(raw, 6) == 1)
    }

    /// The row's checksum (hex), bound as a copy at `index` of `target`.
    func bindChecksum(to target: OpaquePointer, at index: Int32) -> Int32 {
        guard sqlite3_column_type(raw, 5) != SQLITE_NULL, let text = sqlite3_column_text(raw, 5) else {
            return sqlite3_bind_null(target, index)
        }
        return text.withMemoryRebound(to: CChar.self, capacity: 1) {
            CSQLite_bind_text_copy(target, index, $0, sqlite3_column_bytes(raw, 5))
        }
    }
}

/// Binds walk rows into multi-row inserts of `walkRowsPerStatement` rows, and runs each once it is full (the last
/// one by `finish`, part full).
private struct WalkRowWriter {
    let db: Database
    private var statement: Statement?
    private var rowsBound = 0

    init(db: Database) {
        self.db = db
    }

    mutating func add(_ file: SourceFile, id: Int64, snapshot: SnapshotCursor?, unchanged: Bool, settled: Bool) throws {
        if statement == nil {
            let next = try db.cachedStatement(sql: RunFileTable.walkInsertSQL)
            try RunFileTable.check(sqlite3_reset(next.sqliteStatement), db, next)
            // The last run of the statement left its rows bound: a part-full one must not insert them again.
            try RunFileTable.check(sqlite3_clear_bindings(next.sqliteStatement), db, next)
            statement = next
            rowsBound = 0
        }
        guard let statement else { return }
        let raw = statement.sqliteStatement
        let first = Int32(rowsBound * RunFileTable.walkColumns)
        func check(_ code: Int32) throws { try RunFileTable.check(code, db, statement) }
        try check(sqlite3_bind_int64(raw, first + 1, id))
        try check(bindCopy(file.relativePath, raw, first + 2))
        try check(sqlite3_bind_int64(raw, first + 3, Int64(bitPattern: file.fingerprint.device)))
        try check(sqlite3_bind_int64(raw, first + 4, Int64(bitPattern: file.fingerprint.inode)))
        try check(sqlite3_bind_int64(raw, first + 5, file.fingerprint.size))
        try check(sqlite3_bind_int64(raw, first + 6, file.fingerprint.modificationTimeNanoseconds))
        try check(bindCopy(file.kind.rawValue, raw, first + 7))
        try check(sqlite3_bind_int64(raw, first + 8, snapshot == nil ? 0 : 1))
        if let snapshot {
            // An unchanged file's last checksum is its checksum: kept once, the row is a third smaller.
            try check(unchanged ? sqlite3_bind_null(raw, first + 9) : snapshot.bindChecksum(to: raw, at: first + 9))
            try check(unchanged ? snapshot.bindChecksum(to: raw, at: first + 10) : sqlite3_bind_null(raw, first + 10))
        } else {
            try check(sqlite3_bind_null(raw, first + 9))
            try check(sqlite3_bind_null(raw, first + 10))
        }
        try check(sqlite3_bind_int64(raw, first + 11, settled ? 1 : 0))
        rowsBound += 1
        if rowsBound == RunFileTable.walkRowsPerStatement { try finish() }
    }

    /// Runs the statement with the rows bound so far.
    mutating func finish() throws {
        guard let statement else { return }
        let raw = statement.sqliteStatement
        try RunFileTable.check(sqlite3_step(raw), db, statement)
        try RunFileTable.check(sqlite3_reset(raw), db, statement)
        self.statement = nil
    }

}

/// Binds `text` to parameter `index` of `raw` as a copy SQLite owns; SQLite's result code.
private func bindCopy(_ text: String, _ raw: OpaquePointer, _ index: Int32) -> Int32 {
    var text = text
    return text.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return CSQLite_bind_text_copy(raw, index, "", 0) }
        return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            CSQLite_bind_text_copy(raw, index, $0, Int32(bytes.count))
        }
    }
}
