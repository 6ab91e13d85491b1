@testable import CairnCatalog
import CairnCore
@testable import CairnPostgresCatalog
import Foundation
import GRDB
import Logging
import PostgresNIO

// A sync written from an in-memory outcome in one commit, and the stores read back whole: what the oracle and the
// contract suite ask of each backend. The product commits a sync through its run tables (`RunTables.commit`).

extension SQLiteCatalog: ReconcileOracleCatalog {
    /// Everything a sync learned, in one transaction: the store changes; when the scan was healthy, the new healthy
    /// snapshot (`current`, source-relative path → checksum) and the marker fact; the run ids; and what waits.
    public func commitSync(_ sync: SyncRecord, sourceID: Int64, current: [String: Checksum]) async throws {
        try await write { db in
            try ReconcileStore.apply(sync.changes, sourceID: sourceID, runID: sync.runID, db)
            if sync.advanceSnapshot { try ReconcileStore.replaceHealthySnapshot(sourceID: sourceID, with: current, db) }
            try ReconcileStore.recordSync(sync, sourceID: sourceID, healthyFileCount: current.count, db)
        }
    }

    public func applyReconcileDelta(_ delta: StoreDelta, sourceID: Int64, runID: String?) async throws {
        try await write { db in try ReconcileStore.apply(delta, sourceID: sourceID, runID: runID, db) }
    }

    public func healthySnapshot(sourceID: Int64) async throws -> [String: Checksum] {
        try await read { db in try ReconcileStore.pathMap(db, table: "reconcile_healthy_snapshot", sourceID: sourceID) }
    }

    public func replaceHealthySnapshot(sourceID: Int64, with snapshot: [String: Checksum]) async throws {
        try await write { db in try ReconcileStore.replaceHealthySnapshot(sourceID: sourceID, with: snapshot, db) }
    }

    public func saveReconcileFacts(_ facts: ReconcileSourceFacts, sourceID: Int64) async throws {
        try await write { db in try ReconcileStore.saveFacts(facts, sourceID: sourceID, db) }
    }

    public func replacePending(sourceID: Int64, runID: String, entries: [PendingEntry]) async throws {
        try await write { db in try ReconcileStore.replacePending(sourceID: sourceID, runID: runID, entries: entries, db) }
    }

    /// The exclusions of one source, sorted.
    public func exclusions(sourceID: Int64) async throws -> [Checksum] {
        try await read { db in try ReconcileStore.checksums(db, table: "reconcile_exclusion", sourceID: sourceID).sorted() }
    }
}

extension ReconcileStore {
    static func replaceHealthySnapshot(sourceID: Int64, with snapshot: [String: Checksum], _ db: Database) throws {
        try db.execute(sql: "DELETE FROM reconcile_healthy_snapshot WHERE source_id = ?", arguments: [sourceID])
        let insert = try db.cachedStatement(
            sql: "INSERT INTO reconcile_healthy_snapshot (source_id, relative_path, sha1) VALUES (?, ?, ?)")
        for (path, checksum) in snapshot { try insert.execute(arguments: [sourceID, path, checksum]) }
    }

    static func checksums(_ db: Database, table: String, sourceID: Int64) throws -> Set<Checksum> {
        Set(try String.fetchAll(db, sql: "SELECT sha1 FROM \(table) WHERE source_id = ?", arguments: [sourceID])
            .compactMap(Checksum.init(hex:)))
    }

    static func pathMap(_ db: Database, table: String, sourceID: Int64) throws -> [String: Checksum] {
        var result: [String: Checksum] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT relative_path, sha1 FROM \(table) WHERE source_id = ?",
                                    arguments: [sourceID]) {
            result[row["relative_path"] as String] = Checksum(hex: row["sha1"] as String)
        }
        return result
    }
}

extension PostgresCatalog {
    public func commitSync(_ sync: SyncRecord, sourceID: Int64, current: [String: Checksum]) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await Self.apply(sync.changes, sourceID: sourceID, runID: sync.runID, on: connection, logger: logger)
            if sync.advanceSnapshot {
                try await Self.replaceHealthySnapshot(sourceID: sourceID, with: current, on: connection, logger: logger)
            }
            try await Self.recordSync(sync, sourceID: sourceID, healthyFileCount: current.count, on: connection,
                                      logger: logger)
        }
    }

    static func replaceHealthySnapshot(sourceID: Int64, with snapshot: [String: Checksum],
                                       on connection: PostgresConnection, logger: Logger) async throws {
        let paths = snapshot.keys.sorted(), checksums = paths.map { snapshot[$0]!.hex }
        try await connection.query("DELETE FROM cairn.reconcile_healthy_snapshot WHERE source_id = \(sourceID)",
                                   logger: logger)
        try await connection.query("""
            INSERT INTO cairn.reconcile_healthy_snapshot (source_id, relative_path, sha1)
            SELECT \(sourceID), x.path, x.sha1 FROM unnest(\(paths)::text[], \(checksums)::text[]) AS x(path, sha1)
            """, logger: logger)
    }

    func checksums(in table: String, sourceID: Int64) async throws -> Set<Checksum> {
        let rows = try await client.query(PostgresQuery(unsafeSQL: "SELECT sha1 FROM \(table) WHERE source_id = $1",
                                                        binds: try Self.binds(sourceID)), logger: logger)
        var checksums = Set<Checksum>()
        for try await hex in rows.decode(String.self) { if let checksum = Checksum(hex: hex) { checksums.insert(checksum) } }
        return checksums
    }

    static func pathMap(in table: String, sourceID: Int64, on connection: PostgresConnection,
                        logger: Logger) async throws -> [String: Checksum] {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT relative_path, sha1 FROM \(table) WHERE source_id = $1",
                                                            binds: try binds(sourceID)), logger: logger)
        var paths: [String: Checksum] = [:]
        for try await (path, hex) in rows.decode((String, String).self) { paths[path] = Checksum(hex: hex) }
        return paths
    }
}
