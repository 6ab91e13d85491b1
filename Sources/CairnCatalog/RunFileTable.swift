import CairnCore
import Foundation
import GRDB

/// One run's view of its source, kept in SQLite rather than in memory: every media file the walk found (a settled
/// one as part of a run of the snapshot's rows, `RunFileTable+Settled.swift`), its checksum once known, what became
/// of its content. A million-file source costs the run pages on disk, not a line
/// per file in the process.
///
/// The tables are `TEMP` tables of the catalog's writer connection (in SQLite's temporary file, never in
/// `catalog.sqlite`), so they need no migration, vanish with the connection, and can be joined with `source_file`,
/// `asset` and `import_item` in one statement. Only this run's writer uses them; `init` starts them empty. A run
/// leaves them to the connection rather than dropping them: dropping a million rows held up the end of a rescan,
/// and closing the connection deletes SQLite's temporary file in one go.
public struct RunFileTable: RunTables, RunTablesWrittenInPlace {
    public let catalog: SQLiteCatalog
    /// The run's source, whose snapshot the walk is matched against.
    public let sourceID: Int64
    /// What the walk's merge with the snapshot has counted so far.
    let walk = Locked(WalkMatch())

    /// Starts the run's tables empty, for a walk of source `sourceID` (`SQLiteCatalog.withRunTables`).
    init(catalog: SQLiteCatalog, sourceID: Int64) throws {
        self.catalog = catalog
        self.sourceID = sourceID
        try catalog.pool.writeWithoutTransaction { db in
            try db.execute(sql: """
                DROP TABLE IF EXISTS temp.run_file;
                DROP TABLE IF EXISTS temp.run_content;
                DROP TABLE IF EXISTS temp.run_item;
                DROP TABLE IF EXISTS temp.run_sidecar;
                DROP TABLE IF EXISTS temp.run_settled;
                CREATE TEMP TABLE run_file (
                    id INTEGER PRIMARY KEY,
                    path TEXT NOT NULL,
                    device INTEGER NOT NULL,
                    inode INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    mtime_ns INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    sha1 TEXT,
                    hashed INTEGER NOT NULL DEFAULT 0,
                    failed INTEGER NOT NULL DEFAULT 0,
                    failure_operation TEXT,
                    failure_reason TEXT,
                    failure_category TEXT,
                    known INTEGER NOT NULL DEFAULT 0,
                    previous_sha1 TEXT, -- a changed file's last checksum (an unchanged one has it as sha1)
                    settled INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX temp.run_file_unsettled ON run_file(id) WHERE settled = 0;
                CREATE TEMP TABLE run_settled (
                    first_path TEXT PRIMARY KEY NOT NULL,
                    last_path TEXT NOT NULL,
                    first_id INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE TEMP TABLE run_content (
                    sha1 TEXT PRIMARY KEY NOT NULL,
                    first_id INTEGER NOT NULL,
                    in_library INTEGER NOT NULL,
                    first_size INTEGER NOT NULL,
                    first_hashed INTEGER NOT NULL,
                    files INTEGER NOT NULL,
                    hashed_files INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE TEMP TABLE run_sidecar (
                    folder TEXT NOT NULL,
                    path TEXT NOT NULL,
                    device INTEGER NOT NULL,
                    inode INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    mtime_ns INTEGER NOT NULL,
                    PRIMARY KEY (folder, path)
                ) WITHOUT ROWID;
                CREATE TEMP TABLE run_item (
                    sha1 TEXT PRIMARY KEY NOT NULL,
                    left_unfinished INTEGER NOT NULL
                ) WITHOUT ROWID;
                """)
        }
    }

    // MARK: The walk

    public func append(_ files: [SourceFile]) async throws {
        try await BlockingPool.run { [self] in try appendInPlace(files) }
    }

    public func appendSidecars(_ files: [SourceFile]) async throws {
        try await BlockingPool.run { [self] in try appendSidecarsInPlace(files) }
    }

    /// Appends files in the walk's order (one transaction), each matched against the source's snapshot as it goes
    /// in: a file whose fingerprint is unchanged takes its checksum from there (and is settled when the snapshot
    /// says its content is in the library), a changed one keeps its last one aside.
    public func appendInPlace(_ files: [SourceFile]) throws {
        guard !files.isEmpty else { return }
        let sourceID = self.sourceID
        // Only the walk appends, one batch at a time; the lock is never held across the catalog's writer, so no
        // reader of the counts waits on it while the writer waits on the reader.
        var counted = walk.withLock { $0 }
        try catalog.pool.write { db in
            var batch = counted
            try Self.insertWalkRows(files, firstID: Int64(batch.files) + 1, sourceID: sourceID, walk: &batch, in: db)
            counted = batch
        }
        walk.withLock { $0 = counted }
    }

    /// Counts the walk as matched against the snapshot: its files, what is left to hash, what vanished. The walk
    /// counted all but the snapshot's rows after its last path.
    public func matchSnapshot() async throws -> SnapshotMatch {
        let walk = self.walk.withLock { $0 }
        let sourceID = self.sourceID
        return try await catalog.write { db in
            let after = try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM main.source_file WHERE source_id = ? AND relative_path > ?
                """, arguments: [sourceID, walk.upperPath ?? ""]) ?? 0
            return SnapshotMatch(files: walk.files, bytes: walk.bytes, toHash: walk.toHash, bytesToHash: walk.bytesToHash,
                                 vanished: max(0, walk.passedRows + after - walk.foundAlone))
        }
    }

    /// Paths of the source's snapshot that this walk did not find, sorted.
    public func vanishedPaths() async throws -> [String] {
        try await catalog.write { db in
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS temp.run_file_path ON run_file(path)")
            return try String.fetchAll(db, sql: """
                SELECT relative_path FROM main.source_file s
                WHERE s.source_id = ? AND NOT EXISTS (SELECT 1 FROM temp.run_file r WHERE r.path = s.relative_path)
                    AND NOT \(Self.isSettled("s.relative_path"))
                ORDER BY relative_path
                """, arguments: [sourceID])
        }
    }

    // MARK: Hashing

    /// Up to `limit` files still to hash after row `id`, in order; a page stops early past `byteLimit` bytes (one
    /// file at least), so a page of videos stays small.
    public func filesToHash(after id: Int64, limit: Int, byteLimit: Int64) async throws -> [RunFile] {
        try await catalog.write { db in
            let rows = try RunFileRow.fetchCursor(db, sql: """
                SELECT id, path AS relative_path, device, inode, size, mtime_ns, kind
                FROM temp.run_file INDEXED BY run_file_unsettled
                WHERE settled = 0 AND id > ? AND sha1 IS NULL AND failed = 0 ORDER BY id LIMIT ?
                """, arguments: [id, limit])
            var files: [RunFile] = []
            var bytes: Int64 = 0
            while let row = try rows.next() {
                let file = row.file
                if !files.isEmpty, bytes + file.record.fingerprint.size > byteLimit { break }
                bytes += file.record.fingerprint.size
                files.append(file)
            }
            return files
        }
    }

    /// Records a page's checksums (with the fingerprint and kind hashing saw) and its failures (by row id, with
    /// their reasons) in one transaction; `updatingSnapshot`: the checksums go into the source's snapshot too, the
    /// cache the next run reads.
    public func recordHashes(_ hashed: [RunFile], failed: [Int64: FailureReason], updatingSnapshot: Bool) async throws {
        let sourceID = self.sourceID
        guard !hashed.isEmpty || !failed.isEmpty else { return }
        try await catalog.write { db in
            let update = try db.cachedStatement(sql: """
                UPDATE temp.run_file SET sha1 = ?, kind = ?, hashed = 1, device = ?, inode = ?, size = ?, mtime_ns = ?
                WHERE id = ?
                """)
            for file in hashed {
                let record = file.record
                try update.execute(arguments: [
                    record.checksum?.hex, record.kind.rawValue, Int64(bitPattern: record.fingerprint.device),
                    Int64(bitPattern: record.fingerprint.inode), record.fingerprint.size,
                    record.fingerprint.modificationTimeNanoseconds, file.id,
                ])
            }
            let fail = try db.cachedStatement(sql: """
                UPDATE temp.run_file SET failed = 1, failure_operation = ?, failure_reason = ?, failure_category = ?
                WHERE id = ?
                """)
            for (id, reason) in failed.sorted(by: { $0.key < $1.key }) {
                try fail.execute(arguments: [reason.operation, reason.reason, reason.category.rawValue, id])
            }
            if updatingSnapshot { try SQLiteCatalog.upsertSnapshot(hashed.map(\.record), sourceID: sourceID, in: db) }
        }
    }

    // MARK: Content

    /// Groups the files by checksum and sorts them into new content, duplicates and unchanged files.
    ///
    /// Settled files (unchanged, their content in the library by the snapshot's word) need nothing and are not
    /// grouped: they count as unchanged whatever else holds their content, so a rescan groups next to nothing.
    /// The grouping sorts by checksum, so the library lookups walk `asset` in its own order (looking each file up
    /// where it stood was much slower on a million files). A group is
    /// kept (a row in `run_content`) unless all its files were cached and its content is in the library.
    /// `recordItems` groups such content, with its settled files, when an outcome needs it.
    public func classify() async throws -> ContentCounts {
        let settled = walk.withLock { $0.settled }
        return try await catalog.write { db in
            try db.execute(sql: """
                DELETE FROM temp.run_content;
                INSERT INTO temp.run_content \(Self.groupColumns)
                    SELECT * FROM (\(Self.groups(where: "r.settled = 0 AND r.sha1 IS NOT NULL", unsettledOnly: true)))
                    WHERE in_library = 0 OR hashed_files > 0;
                CREATE INDEX IF NOT EXISTS temp.run_content_new ON run_content(first_id) WHERE in_library = 0;
                """)
            var counts = ContentCounts()
            let ungrouped = try Self.ungroupedFiles(db, settled: settled)
            if let row = try ContentCountsRow.fetchOne(db, sql: """
                SELECT COUNT(*) FILTER (WHERE in_library = 0) AS new_content,
                    TOTAL(first_size) FILTER (WHERE in_library = 0) AS new_bytes,
                    TOTAL(CASE WHEN in_library = 1 THEN hashed_files ELSE files - 1 END) AS duplicates,
                    TOTAL(CASE WHEN in_library = 1 THEN files - hashed_files ELSE 0 END) AS unchanged
                FROM temp.run_content
                """) {
                counts.newContent = row.newContent
                counts.newBytes = Int64(row.newBytes)
                counts.duplicates = Int(row.duplicates)
                counts.unchanged = Int(row.unchanged) + ungrouped
            }
            return counts
        }
    }

    /// The columns of a `run_content` row, in the order `groups(where:)` selects them.
    static let groupColumns = "(sha1, first_id, first_size, first_hashed, files, hashed_files, in_library)"

    /// A group per checksum of the files matching `condition`: its first file (with MIN(id), SQLite takes the bare
    /// columns size and hashed from that row), how many files and hashed files, and whether the library holds it.
    /// `unsettledOnly`: `condition` holds `settled = 0`, and the rows are read through the index of unsettled rows
    /// (a rescan's are few: it reads none of the rest).
    static func groups(where condition: String, unsettledOnly: Bool = false) -> String {
        """
        SELECT r.sha1, MIN(r.id), r.size, r.hashed, COUNT(*) AS files, SUM(r.hashed) AS hashed_files,
            EXISTS (SELECT 1 FROM main.asset a WHERE a.sha1 = r.sha1) AS in_library
        FROM temp.run_file r \(unsettledOnly ? "INDEXED BY run_file_unsettled " : "")WHERE \(condition) GROUP BY r.sha1
        """
    }

    /// Files with a checksum that no group holds: cached, their content in the library. Settled files (all with a
    /// checksum) are counted by the walk; only the others are read.
    static func ungroupedFiles(_ db: Database, settled: Int) throws -> Int {
        let unsettled = try Int.fetchOne(db, sql: """
            SELECT COUNT(*) FROM temp.run_file INDEXED BY run_file_unsettled WHERE settled = 0 AND sha1 IS NOT NULL
            """) ?? 0
        let all = settled + unsettled
        let grouped = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(files), 0) FROM temp.run_content") ?? 0
        return all - grouped
    }

    /// Up to `limit` pieces of new content after the one whose first file is `id`, in path order: the first file
    /// (in path order) holding each checksum the library lacks.
    public func newContent(after id: Int64, limit: Int) async throws -> [RunFile] {
        try await catalog.write { db in
            try RunFileRow.fetchAll(db, sql: """
                SELECT r.id, r.path AS relative_path, r.device, r.inode, r.size, r.mtime_ns, r.kind, r.sha1
                FROM temp.run_content c JOIN temp.run_file r ON r.id = c.first_id
                WHERE c.in_library = 0 AND c.first_id > ? ORDER BY c.first_id LIMIT ?
                """, arguments: [id, limit]).map(\.file)
        }
    }

}

extension SQLiteCatalog {
    /// Inserts or updates snapshot rows of `sourceID`, inside the caller's transaction.
    static func upsertSnapshot(_ records: [SourceFile], sourceID: Int64, in db: Database) throws {
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO source_file (source_id, relative_path, device, inode, size, mtime_ns, sha1, kind)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (source_id, relative_path) DO UPDATE SET
                device = excluded.device, inode = excluded.inode, size = excluded.size,
                mtime_ns = excluded.mtime_ns, sha1 = excluded.sha1, kind = excluded.kind,
                in_library = CASE WHEN source_file.sha1 IS excluded.sha1 THEN source_file.in_library ELSE 0 END
            """)
        for record in records {
            try upsert.execute(arguments: [
                sourceID, record.relativePath, Int64(bitPattern: record.fingerprint.device),
                Int64(bitPattern: record.fingerprint.inode), record.fingerprint.size,
                record.fingerprint.modificationTimeNanoseconds, record.checksum?.hex, record.kind.rawValue,
            ])
        }
    }
}

extension SQLiteCatalog {
    /// Marks the snapshot files of `sourceID` whose content now has an asset (`source_file.in_library`), so the
    /// next run settles them without a lookup. Only rows not yet marked are visited (a partial index holds them).
    public func markSnapshotContentInLibrary(sourceID: Int64) async throws {
        try await write { db in
            try db.execute(sql: """
                UPDATE source_file SET in_library = 1
                WHERE source_id = ? AND in_library = 0 AND sha1 IS NOT NULL
                    AND EXISTS (SELECT 1 FROM asset a WHERE a.sha1 = source_file.sha1)
                """, arguments: [sourceID])
        }
    }
}

extension SQLiteCatalog: RunTablesCatalog {
    /// Runs `body` with a run's tables for source `sourceID`, started empty (on the blocking pool). The handle is
    /// `body`'s alone: the next run's tables replace these on the same connection, so a handle kept past its scope
    /// would read another run's files.
    public func withRunTables<Value: Sendable>(sourceID: Int64, _ body: (any RunTables) async throws -> Value)
        async throws -> Value {
        let tables = try await BlockingPool.run { [self] in try RunFileTable(catalog: self, sourceID: sourceID) }
        return try await body(tables)
    }
}
