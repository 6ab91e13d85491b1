import CairnCore
import Foundation
import GRDB

/// The library's SQLite catalog: the single source of truth for what the library holds.
///
/// WAL mode, so readers (`cairn status`) never wait for a running import.
public final class SQLiteCatalog: Sendable {
    let pool: any DatabaseWriter
    private let isReadOnly: Bool
    /// The catalog file, for messages.
    public let path: String

    /// Opens (creating if needed) the catalog at `path` and brings its schema up to date.
    ///
    /// - Parameter readOnly: for commands that must leave the library byte-identical (`dry-run`, `status`):
    ///   nothing is written, not even the bookkeeping a writable open does; the schema must already be current.
    public init(path: String, readOnly: Bool = false, live: Bool = false) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.readonly = readOnly
        configuration.prepareDatabase { db in
            // Readers look rows up by key; SQLite's default 2 MB page cache each (up to five readers) mostly
            // duplicates the kernel's page cache and grows with the catalog. The writer keeps the default.
            if db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -512") }
        }
        if !readOnly {
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                // A checkpoint copies every page the log holds into the file, and syncs both. SQLite's default
                // (1,000 pages, 4 MB) checkpointed an import of small files every few batches, copying the same
                // hot pages again each time; a log of 10,000 pages (40 MB) lets an import write less and end
                // sooner (`Benchmarks/README.md`).
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 10000")
            }
        }
        isReadOnly = readOnly
        self.path = path
        if readOnly, !live, (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int).map({ $0 == 0 }) ?? true {
            // An empty or absent write-ahead log: every commit is in the file, so (with writers kept out by the
            // caller's lock) it can be read as immutable, which touches nothing beside it. With a log holding
            // commits (a run was killed) it is read normally.
            pool = try DatabaseQueue(path: "file:\(path)?immutable=1", configuration: configuration)
        } else {
            pool = try DatabasePool(path: path, configuration: configuration)
        }
        if readOnly {
            let pending = try pool.read { db in try Migrations.migrator.hasCompletedMigrations(db) }
            guard pending else { throw CatalogError.schemaOutOfDate(path) }
        } else {
            try Migrations.migrator.migrate(pool)
        }
    }

    /// Moves every commit from the write-ahead log into `catalog.sqlite` and empties the log, then closes.
    /// A library at rest is then one self-contained file, which a dry run can read without leaving a trace.
    public func close() {
        if !isReadOnly {
            _ = try? pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
        try? pool.close()
    }

    /// Runs `body` on a reader, on the blocking pool.
    func read<Value: Sendable>(_ body: @escaping @Sendable (Database) throws -> Value) async throws -> Value {
        try await BlockingPool.run { [pool] in try pool.read(body) }
    }

    /// Runs `body` in a write transaction, on the blocking pool.
    func write<Value: Sendable>(_ body: @escaping @Sendable (Database) throws -> Value) async throws -> Value {
        try await BlockingPool.run { [pool] in try pool.write(body) }
    }

    // MARK: Sources

    /// The id of the source at `rootPath`, registering it on first sight.
    public func sourceID(forRoot rootPath: String) async throws -> Int64 {
        let now = Date()
        return try await write { db in
            if let existing = try Int64.fetchOne(db, sql: "SELECT id FROM source WHERE root_path = ?", arguments: [rootPath]) {
                return existing
            }
            let record = SourceRecord(id: nil, rootPath: rootPath, createdAt: now)
            try record.insert(db)
            return db.lastInsertedRowID
        }
    }

    // MARK: Snapshots

    /// Writes a snapshot's changes in one transaction: new or changed files, and paths gone from the source.
    public func updateSnapshot(sourceID: Int64, upserting records: [SourceFile], removing removedPaths: [String]) async throws {
        guard !records.isEmpty || !removedPaths.isEmpty else { return }
        try await write { db in
            try Self.upsertSnapshot(records, sourceID: sourceID, in: db)
            let delete = try db.cachedStatement(sql: "DELETE FROM source_file WHERE source_id = ? AND relative_path = ?")
            for path in removedPaths { try delete.execute(arguments: [sourceID, path]) }
        }
    }

    // MARK: Assets

    public func assetChecksums() async throws -> Set<Checksum> {
        try await read { db in
            var result = Set<Checksum>()
            let values = try String.fetchCursor(db, sql: "SELECT sha1 FROM asset")
            while let hex = try values.next() { if let checksum = Checksum(hex: hex) { result.insert(checksum) } }
            return result
        }
    }

    public func asset(_ checksum: Checksum) async throws -> AssetRecord? {
        try await read { db in try AssetRecord.fetchOne(db, key: checksum) }
    }

    public func assetCount() async throws -> Int {
        try await read { db in try AssetRecord.fetchCount(db) }
    }

    public func allAssets() async throws -> [AssetRecord] {
        try await read { db in try AssetRecord.order(AssetRecord.Columns.checksum).fetchAll(db) }
    }

    /// The assets a run brought in or found at its destination (their `run_id`), by checksum.
    public func assets(broughtInBy runID: String) async throws -> [AssetRecord] {
        try await read { db in
            try AssetRecord.filter(AssetRecord.Columns.runID == runID).order(AssetRecord.Columns.checksum).fetchAll(db)
        }
    }

    // MARK: Runs

    /// Records the start of a run.
    public func startRun(_ run: RunRecord) async throws {
        try await write { db in try run.insert(db) }
    }

    /// Records how a run ended, with its per-file failures.
    public func finishRun(_ run: RunRecord, failures: [RunFailureRecord]) async throws {
        try await write { db in
            try run.update(db)
            for failure in failures { try failure.insert(db) }
        }
    }

    public func lastRun(command: String?) async throws -> RunRecord? {
        try await read { db in
            var request = RunRecord.order(RunRecord.Columns.startedAt.desc, RunRecord.Columns.id.desc)
            if let command { request = request.filter(RunRecord.Columns.command == command) }
            return try request.fetchOne(db)
        }
    }

    public func run(id: String) async throws -> RunRecord? {
        try await read { db in try RunRecord.fetchOne(db, key: id) }
    }

    public func runs(limit: Int) async throws -> [RunRecord] {
        try await read { db in try RunRecord.order(RunRecord.Columns.startedAt.desc, RunRecord.Columns.id.desc).limit(limit).fetchAll(db) }
    }

    public func failures(runID: String) async throws -> [RunFailureRecord] {
        try await read { db in
            try RunFailureRecord.filter(RunFailureRecord.Columns.runID == runID).order(RunFailureRecord.Columns.relativePath).fetchAll(db)
        }
    }
}

/// Why a catalog cannot be used as it is.
public enum CatalogError: Error, CustomStringConvertible, Sendable {
    case schemaOutOfDate(String)
    /// SQLite found no room to write (SQLITE_FULL): the library's disk is full.
    case diskFull(String)

    public var description: String {
        switch self {
        case .schemaOutOfDate(let path):
            return "\(path): the catalog was written by an older cairn; run `cairn sync` or `cairn import` once to upgrade it"
        case .diskFull(let path):
            return "\(path): No space left on device (the library's disk is full; free some space and run again: "
                + "what was imported is kept, the rest resumes)"
        }
    }

    /// `error`, or `diskFull` when it is SQLite's SQLITE_FULL.
    static func naming(_ error: any Error, path: String) -> any Error {
        if let database = error as? DatabaseError, database.resultCode == .SQLITE_FULL { return CatalogError.diskFull(path) }
        return error
    }
}
