import CairnCatalog
import CairnCore
import Foundation
import Logging
import PostgresNIO

/// A run's tables in PostgreSQL, as `RunTables` describes them: `TEMP` tables of one connection the run holds from
/// `withRunTables` to its end, so they need no migration, are seen by no other session, vanish with the connection,
/// and join `cairn.source_file`, `cairn.asset` and `cairn.import_item` in one statement. Text is compared and
/// ordered bytewise (`COLLATE "C"`) where order matters, as SQLite does. The planner gets the tables' statistics
/// after the walk and after grouping (`ANALYZE`): autovacuum never visits `TEMP` tables. Should the connection
/// close, every operation ends with `runConnectionLost` (`RunConnection`), and the run is started again.
struct PostgresRunTables: RunTables {
    let sourceID: Int64
    let run: RunConnection
    let catalog: PostgresCatalog
    var logger: Logger { catalog.logger }
    var connection: PostgresConnection { run.connection }

    /// `PostgresCatalog.failing` for an operation on the run's own connection, which ends when the connection does
    /// (`RunConnection.watching`), so it needs no time limit; nor may it have one: a slow statement given up would
    /// run on, on this same connection, beside its second try.
    func failing<Value: Sendable>(_ operation: String, _ body: @escaping @Sendable () async throws -> Value)
        async throws -> Value {
        try await catalog.retrying(operation) { try await run.watching(body) }
    }

    /// Starts the tables empty (dropping what an earlier use of the pooled connection left).
    func create() async throws {
        try await failing("start the run's tables") { [self] in
            for statement in [
                Self.dropAll,
                """
                CREATE TEMP TABLE run_file (
                  id bigint PRIMARY KEY, path text NOT NULL, device bigint NOT NULL, inode bigint NOT NULL,
                  size bigint NOT NULL, mtime_ns bigint NOT NULL, kind text NOT NULL, sha1 text,
                  hashed boolean NOT NULL DEFAULT false, failed boolean NOT NULL DEFAULT false, failure_operation text,
                  failure_reason text, failure_category text, known boolean NOT NULL DEFAULT false, previous_sha1 text,
                  settled boolean NOT NULL DEFAULT false)
                """,
                """
                CREATE TEMP TABLE run_content (
                  sha1 text PRIMARY KEY, first_id bigint NOT NULL, in_library boolean NOT NULL,
                  first_size bigint NOT NULL, first_hashed boolean NOT NULL, files integer NOT NULL,
                  hashed_files integer NOT NULL)
                """,
                """
                CREATE TEMP TABLE run_sidecar (
                  folder text NOT NULL, path text NOT NULL, device bigint NOT NULL, inode bigint NOT NULL,
                  size bigint NOT NULL, mtime_ns bigint NOT NULL, PRIMARY KEY (folder, path))
                """,
                "CREATE TEMP TABLE run_item (sha1 text PRIMARY KEY, left_unfinished boolean NOT NULL)",
            ] { try await execute(statement) }
        }
    }

    /// Drops the tables, so the pooled connection goes back clean.
    func drop() async throws {
        try await failing("drop the run's tables") { [self] in
            try await execute(Self.dropAll)
        }
    }

    /// Drops every table a run makes, a sync's included.
    static let dropAll = """
        DROP TABLE IF EXISTS pg_temp.run_file, pg_temp.run_content, pg_temp.run_sidecar, pg_temp.run_item,
          pg_temp.run_current, pg_temp.run_path_change, pg_temp.run_protected
        """

    // MARK: The walk

    func append(_ files: [SourceFile]) async throws {
        guard !files.isEmpty else { return }
        try await failing("add \(files.count) walked files to the run's tables") { [self] in
            let first = try await scalar(Int64.self, "SELECT COALESCE(max(id), 0) + 1 FROM pg_temp.run_file")
            let columns = SnapshotColumns(files), ids = (0..<Int64(files.count)).map { first + $0 }
            try await execute("""
                INSERT INTO pg_temp.run_file (id, path, device, inode, size, mtime_ns, kind, known, previous_sha1, sha1,
                  settled)
                SELECT v.id, v.relative_path, v.device, v.inode, v.size, v.mtime_ns, v.kind, s.relative_path IS NOT NULL,
                  s.sha1, CASE WHEN m.unchanged THEN s.sha1 END, m.unchanged AND s.in_library
                FROM unnest($1::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[])
                  AS v(id, relative_path, device, inode, size, mtime_ns, kind)
                LEFT JOIN cairn.source_file s ON s.source_id = $2 AND s.relative_path = v.relative_path
                CROSS JOIN LATERAL (SELECT COALESCE(s.device = v.device AND s.inode = v.inode AND s.size = v.size
                  AND s.mtime_ns = v.mtime_ns AND s.sha1 IS NOT NULL, false) AS unchanged) m
                """, PostgresCatalog.binds(ids, sourceID, columns.paths, columns.devices, columns.inodes, columns.sizes,
                                          columns.modificationTimes, columns.kinds))
        }
    }

    func appendSidecars(_ files: [SourceFile]) async throws {
        guard !files.isEmpty else { return }
        try await failing("add \(files.count) sidecars to the run's tables") { [self] in
            let rows = try PostgresCatalog.json(files.lastOfEach(by: \.relativePath).map(SidecarRow.init))
            try await execute("""
                INSERT INTO pg_temp.run_sidecar (folder, path, device, inode, size, mtime_ns)
                SELECT x.folder, x.relative_path, x.device, x.inode, x.size, x.mtime_ns
                FROM jsonb_to_recordset($1::jsonb) AS x(folder text, relative_path text, device bigint, inode bigint,
                  size bigint, mtime_ns bigint)
                ON CONFLICT (folder, path) DO UPDATE SET device = excluded.device, inode = excluded.inode,
                  size = excluded.size, mtime_ns = excluded.mtime_ns
                """, PostgresCatalog.binds(rows))
        }
    }

    func matchSnapshot() async throws -> SnapshotMatch {
        try await failing("match the walk against the snapshot") { [self] in
            try await execute("ANALYZE pg_temp.run_file")
            let row = try await one(SnapshotMatchRow.self, """
                SELECT count(*) AS files, COALESCE(sum(size), 0)::float8 AS bytes,
                  count(*) FILTER (WHERE sha1 IS NULL) AS to_hash,
                  COALESCE(sum(size) FILTER (WHERE sha1 IS NULL), 0)::float8 AS bytes_to_hash,
                  count(*) FILTER (WHERE known) AS known
                FROM pg_temp.run_file
                """)
            let inSnapshot = try await scalar(Int.self, "SELECT count(*) FROM cairn.source_file WHERE source_id = $1",
                                              PostgresCatalog.binds(sourceID))
            return SnapshotMatch(files: row.files, bytes: Int64(row.bytes), toHash: row.toHash,
                                 bytesToHash: Int64(row.bytesToHash), vanished: max(0, inSnapshot - row.known))
        }
    }

    func vanishedPaths() async throws -> [String] {
        try await failing("list the files gone from the source") { [self] in
            let rows = try await query("""
                SELECT relative_path FROM cairn.source_file s
                WHERE s.source_id = $1 AND NOT EXISTS (SELECT 1 FROM pg_temp.run_file r WHERE r.path = s.relative_path)
                ORDER BY relative_path COLLATE "C"
                """, PostgresCatalog.binds(sourceID))
            var paths: [String] = []
            for try await path in rows.decode(String.self) { paths.append(path) }
            return paths
        }
    }

    // MARK: Hashing

    func filesToHash(after id: Int64, limit: Int, byteLimit: Int64) async throws -> [RunFile] {
        try await failing("read the files left to hash") { [self] in
            let rows = try await all(RunFileRow.self, """
                SELECT id, path AS relative_path, device, inode, size, mtime_ns, kind FROM pg_temp.run_file
                WHERE id > $1 AND sha1 IS NULL AND NOT failed ORDER BY id LIMIT $2
                """, PostgresCatalog.binds(id, limit))
            var files: [RunFile] = []
            var bytes: Int64 = 0
            for file in rows.map(\.file) {
                if !files.isEmpty, bytes + file.record.fingerprint.size > byteLimit { break }
                bytes += file.record.fingerprint.size
                files.append(file)
            }
            return files
        }
    }

    func recordHashes(_ hashed: [RunFile], failed: [Int64: FailureReason], updatingSnapshot: Bool) async throws {
        guard !hashed.isEmpty || !failed.isEmpty else { return }
        try await failing("record \(hashed.count) checksums and \(failed.count) hashing failures") { [self] in
            let done = SnapshotColumns(hashed.map(\.record)), ids = hashed.map(\.id)
            let failures = try PostgresCatalog.json(failed.map { HashFailureRow(id: $0.key, reason: $0.value) })
            let snapshot = SnapshotColumns(hashed.map(\.record).lastOfEach(by: \.relativePath))
            let (sourceID, logger) = (sourceID, logger)
            try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("""
                    UPDATE pg_temp.run_file r SET sha1 = NULLIF(x.sha1, ''), kind = x.kind, hashed = true,
                      device = x.device, inode = x.inode, size = x.size, mtime_ns = x.mtime_ns
                    FROM unnest(\(ids)::bigint[], \(done.checksums)::text[], \(done.kinds)::text[], \(done.devices)::bigint[],
                      \(done.inodes)::bigint[], \(done.sizes)::bigint[], \(done.modificationTimes)::bigint[])
                      AS x(id, sha1, kind, device, inode, size, mtime_ns)
                    WHERE r.id = x.id
                    """, logger: logger)
                try await connection.query(PostgresQuery(unsafeSQL: """
                    UPDATE pg_temp.run_file r SET failed = true, failure_operation = x.operation, failure_reason = x.reason,
                      failure_category = x.category
                    FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, operation text, reason text, category text)
                    WHERE r.id = x.id
                    """, binds: try PostgresCatalog.binds(failures)), logger: logger)
                if updatingSnapshot {
                    try await PostgresCatalog.upsertSnapshot(snapshot, sourceID: sourceID, on: connection, logger: logger)
                }
            }
        }
    }

    // MARK: Content

    func classify() async throws -> ContentCounts {
        try await failing("sort the walk's content into new, duplicate and unchanged") { [self] in
            try await execute("DELETE FROM pg_temp.run_content")
            try await execute("""
                INSERT INTO pg_temp.run_content \(Self.groupColumns)
                SELECT * FROM (\(Self.groups(where: "r.sha1 IS NOT NULL AND NOT r.settled"))) g
                WHERE NOT g.in_library OR g.hashed_files > 0
                """)
            try await execute("ANALYZE pg_temp.run_content")
            let row = try await one(ContentCountsRow.self, """
                SELECT count(*) FILTER (WHERE NOT in_library) AS new_content,
                  COALESCE(sum(first_size) FILTER (WHERE NOT in_library), 0)::float8 AS new_bytes,
                  COALESCE(sum(CASE WHEN in_library THEN hashed_files ELSE files - 1 END), 0)::float8 AS duplicates,
                  COALESCE(sum(CASE WHEN in_library THEN files - hashed_files ELSE 0 END), 0)::float8 AS unchanged
                FROM pg_temp.run_content
                """)
            return ContentCounts(newContent: row.newContent, newBytes: Int64(row.newBytes),
                                 duplicates: Int(row.duplicates), unchanged: Int(row.unchanged) + (try await ungroupedFiles()))
        }
    }

    /// The columns of a `run_content` row, in the order `groups(where:)` selects them.
    static let groupColumns = "(sha1, first_id, first_size, first_hashed, files, hashed_files, in_library)"

    /// A group per checksum of the files matching `condition`: its first file's id, size and whether it was hashed,
    /// how many files and hashed files, and whether the library holds it.
    static func groups(where condition: String) -> String {
        """
        SELECT g.sha1, g.first_id, f.size, f.hashed, g.files, g.hashed_files,
          EXISTS (SELECT 1 FROM cairn.asset a WHERE a.sha1 = g.sha1) AS in_library
        FROM (SELECT r.sha1, min(r.id) AS first_id, count(*)::integer AS files,
                count(*) FILTER (WHERE r.hashed)::integer AS hashed_files
              FROM pg_temp.run_file r WHERE \(condition) GROUP BY r.sha1) g
        JOIN pg_temp.run_file f ON f.id = g.first_id
        """
    }

    /// Files with a checksum that no group holds: cached, their content in the library.
    func ungroupedFiles() async throws -> Int {
        try await scalar(Int.self, """
            SELECT ((SELECT count(*) FROM pg_temp.run_file WHERE sha1 IS NOT NULL)
              - (SELECT COALESCE(sum(files), 0) FROM pg_temp.run_content))::bigint
            """)
    }

    func newContent(after id: Int64, limit: Int) async throws -> [RunFile] {
        try await failing("read the run's new content") { [self] in
            try await all(RunFileRow.self, """
                SELECT r.id, r.path AS relative_path, r.device, r.inode, r.size, r.mtime_ns, r.kind, r.sha1
                FROM pg_temp.run_content c JOIN pg_temp.run_file r ON r.id = c.first_id
                WHERE NOT c.in_library AND c.first_id > $1 ORDER BY c.first_id LIMIT $2
                """, PostgresCatalog.binds(id, limit)).map(\.file)
        }
    }

    /// Items unfinished (or in flight), not counting content this run plans as new.
    private static func unfinished(owingTransfer: Bool) -> String {
        "(NOT \(ItemSQL.terminal) OR i.in_flight)"
            + (owingTransfer ? " AND \(ItemSQL.owingTransfer)" : "")
            + " AND NOT EXISTS (SELECT 1 FROM pg_temp.run_content c WHERE c.sha1 = i.sha1 AND NOT c.in_library)"
    }

    func unfinishedImportItems(after id: ItemID, limit: Int, owingTransfer: Bool) async throws -> [ItemRecord] {
        try await failing("read the items earlier runs left unfinished") { [self] in
            try await connection.query(PostgresCatalog.itemsQuery(
                where: Self.unfinished(owingTransfer: owingTransfer) + " AND i.id > $1",
                binds: try PostgresCatalog.binds(id.rawValue), limit: limit), logger: logger).records(ItemRecord.self)
        }
    }

    func unfinishedImportItemCount(owingTransfer: Bool) async throws -> Int {
        try await failing("count the items earlier runs left unfinished") { [self] in
            try await scalar(Int.self, "SELECT count(*) FROM cairn.import_item i WHERE \(Self.unfinished(owingTransfer: owingTransfer))")
        }
    }

    func crashFailedImportItems() async throws -> [ItemRecord] {
        try await failing("read the items the crash-loop guard failed") { [self] in
            try await execute("CREATE INDEX IF NOT EXISTS run_file_sha1 ON pg_temp.run_file (sha1)")
            return try await connection.query(PostgresCatalog.itemsQuery(
                where: "i.source_id = $1 AND \(ItemSQL.crashFailed)"
                    + " AND EXISTS (SELECT 1 FROM pg_temp.run_file r WHERE r.sha1 = i.sha1)",
                binds: try PostgresCatalog.binds(sourceID)), logger: logger).records(ItemRecord.self)
        }
    }

    // MARK: Statements on the run's connection

    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> PostgresRowSequence {
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
    }

    func execute(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
    }

    func all<Record: Decodable>(_ type: Record.Type, _ sql: String, _ binds: PostgresBindings = PostgresBindings())
        async throws -> [Record] {
        try await query(sql, binds).records(type)
    }

    func one<Record: Decodable>(_ type: Record.Type, _ sql: String, _ binds: PostgresBindings = PostgresBindings())
        async throws -> Record {
        guard let record = try await all(type, sql, binds).first else { throw PostgresCatalogError.missingRow(sql) }
        return record
    }

    func scalar<Value: PostgresDecodable & Sendable>(_ type: Value.Type, _ sql: String,
                                          _ binds: PostgresBindings = PostgresBindings()) async throws -> Value {
        for try await value in try await query(sql, binds).decode(Value.self) { return value }
        throw PostgresCatalogError.missingRow(sql)
    }
}

extension PostgresCatalog: RunTablesCatalog {
    /// Leases one connection of the pool for the run: its `TEMP` tables are that connection's alone. `body`'s own
    /// errors reach the caller as they are.
    public func withRunTables<Value: Sendable>(sourceID: Int64, _ body: (any RunTables) async throws -> Value)
        async throws -> Value {
        let leased: Result<Value, any Error> = try await retrying("lease a connection for the run's tables") {
            try await client.withConnection { connection in
                let tables = PostgresRunTables(sourceID: sourceID, run: RunConnection(connection), catalog: self)
                try await tables.create()
                let result: Result<Value, any Error>
                do { result = .success(try await body(tables)) } catch { result = .failure(error) }
                try? await tables.drop()
                return result
            }
        }
        return try leased.get()
    }
}

/// A sidecar row: its folder and the snapshot row's columns.
private struct SidecarRow: Encodable {
    var folder: String
    var file: SnapshotRow

    init(_ file: SourceFile) {
        folder = RelativePath.folder(of: file.relativePath)
        self.file = SnapshotRow(file)
    }

    enum CodingKeys: String, CodingKey { case folder }

    func encode(to encoder: any Encoder) throws {
        try file.encode(to: encoder)
        var columns = encoder.container(keyedBy: CodingKeys.self)
        try columns.encode(folder, forKey: .folder)
    }
}

/// A file hashing failed, by row id.
private struct HashFailureRow: Encodable {
    var id: Int64
    var operation: String?
    var reason: String
    var category: String

    init(id: Int64, reason: FailureReason) {
        self.id = id
        operation = reason.operation
        self.reason = reason.reason
        category = reason.category.rawValue
    }
}
