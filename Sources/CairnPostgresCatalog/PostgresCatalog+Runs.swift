import CairnCatalog
import CairnCore
import Foundation
import Logging
import PostgresNIO

/// Snapshots and runs in PostgreSQL, as `SnapshotCatalog` and `RunCatalog` describe them; rows travel through
/// their records' own codecs (`SnapshotRow`, `RunRecord`, `RunFailureRecord`).
extension PostgresCatalog: SnapshotCatalog, RunCatalog {
    public func updateSnapshot(sourceID: Int64, upserting files: [SourceFile], removing removedPaths: [String]) async throws {
        guard !files.isEmpty || !removedPaths.isEmpty else { return }
        let columns = SnapshotColumns(files.lastOfEach(by: \.relativePath))
        return try await failing("update the snapshot of source \(sourceID)") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.upsertSnapshot(columns, sourceID: sourceID, on: connection, logger: logger)
                try await connection.query("""
                    DELETE FROM cairn.source_file WHERE source_id = \(sourceID) AND relative_path = ANY(\(removedPaths)::text[])
                    """, logger: logger)
            }
        }
    }

    /// Inserts or updates snapshot rows of `sourceID` (one per path), in the caller's transaction; a file whose
    /// content changed is no longer known to be in the library.
    static func upsertSnapshot(_ files: SnapshotColumns, sourceID: Int64, on connection: PostgresConnection,
                               logger: Logger) async throws {
        guard !files.paths.isEmpty else { return }
        try await connection.query("""
            INSERT INTO cairn.source_file AS f (source_id, relative_path, device, inode, size, mtime_ns, sha1, kind)
            SELECT \(sourceID), x.relative_path, x.device, x.inode, x.size, x.mtime_ns, NULLIF(x.sha1, ''), x.kind
            FROM unnest(\(files.paths)::text[], \(files.devices)::bigint[], \(files.inodes)::bigint[],
              \(files.sizes)::bigint[], \(files.modificationTimes)::bigint[], \(files.checksums)::text[],
              \(files.kinds)::text[]) AS x(relative_path, device, inode, size, mtime_ns, sha1, kind)
            ON CONFLICT (source_id, relative_path) DO UPDATE SET device = excluded.device,
              inode = excluded.inode, size = excluded.size, mtime_ns = excluded.mtime_ns, sha1 = excluded.sha1,
              kind = excluded.kind,
              in_library = f.in_library AND f.sha1 IS NOT DISTINCT FROM excluded.sha1
            """, logger: logger)
    }

    public func markSnapshotContentInLibrary(sourceID: Int64) async throws {
        return try await failing("mark the snapshot of source \(sourceID) in the library") { [self] in
            try await client.query("""
                UPDATE cairn.source_file f SET in_library = true
                WHERE f.source_id = \(sourceID) AND NOT f.in_library AND f.sha1 IS NOT NULL
                  AND EXISTS (SELECT 1 FROM cairn.asset a WHERE a.sha1 = f.sha1)
                """, logger: logger)
        }
    }

    // MARK: Runs

    /// A run's columns as `RunRecord`'s codec names them, from `jsonb_to_recordset` (times as seconds since 1970).
    private static let runRecordset = """
        AS x(id text, command text, source_id bigint, started_at double precision, ended_at double precision,
          outcome text, message text, counts jsonb, summary text)
        """
    private static let runColumns = "id, command, source_id, started_at, ended_at, outcome, message, counts, summary"

    public func startRun(_ run: RunRecord) async throws {
        let rows = try Self.json([run])
        return try await failing("record the start of run \(run.id)") { [self] in
            try await client.query(PostgresQuery(unsafeSQL: """
                INSERT INTO cairn.run (\(Self.runColumns))
                SELECT x.id, x.command, x.source_id, to_timestamp(x.started_at), to_timestamp(x.ended_at), x.outcome,
                  x.message, x.counts, x.summary
                FROM jsonb_to_recordset($1::jsonb) \(Self.runRecordset)
                """, binds: try Self.binds(rows)), logger: logger)
        }
    }

    public func finishRun(_ run: RunRecord, failures: [RunFailureRecord]) async throws {
        let rows = try Self.json([run]), failed = try Self.json(failures)
        return try await failing("record how run \(run.id) ended") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: """
                    UPDATE cairn.run r SET command = x.command, source_id = x.source_id,
                      started_at = to_timestamp(x.started_at), ended_at = to_timestamp(x.ended_at), outcome = x.outcome,
                      message = x.message, counts = x.counts, summary = x.summary
                    FROM jsonb_to_recordset($1::jsonb) \(Self.runRecordset)
                    WHERE r.id = x.id
                    """, binds: try Self.binds(rows)), logger: logger)
                try await connection.query("""
                    INSERT INTO cairn.run_failure (run_id, relative_path, phase, reason, category)
                    SELECT x.run_id, x.relative_path, x.phase, x.reason, x.category
                    FROM jsonb_to_recordset(\(failed)::jsonb)
                      AS x(run_id text, relative_path text, phase text, reason text, category text)
                    """, logger: logger)
            }
        }
    }

    public func lastRun(command: String?) async throws -> RunRecord? {
        try await runs(where: command == nil ? "true" : "command = $1", binds: command.map { [$0] } ?? [], limit: 1).first
    }

    public func run(id: String) async throws -> RunRecord? {
        try await runs(where: "id = $1", binds: [id], limit: 1).first
    }

    public func runs(limit: Int) async throws -> [RunRecord] {
        try await runs(where: "true", binds: [], limit: limit)
    }

    public func failures(runID: String) async throws -> [RunFailureRecord] {
        return try await failing("read the failures of run \(runID)") { [self] in
            let rows = try await client.query("""
                SELECT run_id, relative_path, phase, reason, category FROM cairn.run_failure WHERE run_id = \(runID)
                ORDER BY relative_path
                """, logger: logger)
            return try await rows.records(RunFailureRecord.self)
        }
    }

    /// Runs matching `condition` (with `binds` as `$1`…), newest first.
    func runs(where condition: String, binds: [String], limit: Int) async throws -> [RunRecord] {
        return try await failing("read runs") { [self] in
            var bindings = PostgresBindings()
            for bind in binds { bindings.append(bind) }
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT \(Self.runColumns) FROM cairn.run WHERE \(condition)
                ORDER BY started_at DESC, id DESC LIMIT \(max(0, limit))
                """, binds: bindings), logger: logger)
            return try await rows.records(RunRecord.self)
        }
    }
}

/// Sources, and the runs that ended well, in PostgreSQL.
extension PostgresCatalog {
    public func heldByAnySource(_ checksums: Set<Checksum>) async throws -> Set<Checksum> {
        guard !checksums.isEmpty else { return [] }
        let hexes = checksums.map(\.hex)
        return try await failing("look up content the sources hold") { [self] in
            let rows = try await client.query("""
                SELECT DISTINCT sha1 FROM cairn.source_file WHERE sha1 = ANY(\(hexes)::text[])
                """, logger: logger)
            return Set(try await rows.checksums())
        }
    }

    public func sources() async throws -> [SourceRecord] {
        return try await failing("read the sources") { [self] in
            try await client.query("SELECT id, root_path, created_at FROM cairn.source ORDER BY id", logger: logger)
                .records(SourceRecord.self)
        }
    }

    public func existingSourceID(forRoot rootPath: String) async throws -> Int64? {
        return try await failing("look up the source \(rootPath)") { [self] in
            let rows = try await client.query("SELECT id FROM cairn.source WHERE root_path = \(rootPath)", logger: logger)
            for try await id in rows.decode(Int64.self) { return id }
            return nil
        }
    }

    public func lastRun(endedIn outcomes: [RunOutcome]) async throws -> RunRecord? {
        guard !outcomes.isEmpty else { return nil }
        let places = outcomes.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        return try await runs(where: "outcome IN (\(places))", binds: outcomes.map(\.rawValue), limit: 1).first
    }
}

/// Files as one array per column, bound as PostgreSQL arrays (`unnest`): for a batch of thousands, cheaper to send
/// and to read than a JSON array of rows. A file with no checksum travels as "" (`NULLIF` in the statement).
struct SnapshotColumns: Sendable {
    var paths: [String] = []
    var devices: [Int64] = []
    var inodes: [Int64] = []
    var sizes: [Int64] = []
    var modificationTimes: [Int64] = []
    var checksums: [String] = []
    var kinds: [String] = []

    init(_ files: some Collection<SourceFile>) {
        for file in files {
            paths.append(file.relativePath)
            devices.append(Int64(bitPattern: file.fingerprint.device))
            inodes.append(Int64(bitPattern: file.fingerprint.inode))
            sizes.append(file.fingerprint.size)
            modificationTimes.append(file.fingerprint.modificationTimeNanoseconds)
            checksums.append(file.checksum?.hex ?? "")
            kinds.append(file.kind.rawValue)
        }
    }
}
