@testable import CairnCatalog
import CairnCore
@testable import CairnPostgresCatalog
import Foundation
import GRDB
import PostgresNIO

// What only tests read or write of a catalog, on both backends: every import item, a source's whole snapshot, what
// other sources hold, assets put in directly, the probes counted. The product never asks a catalog for these.

/// The test-only reads and writes of a catalog, beside the product's interfaces.
public protocol CatalogInspection: Sendable {
    /// Every import item, by id.
    func importItems() async throws -> [ItemRecord]
    /// The last snapshot of a source, keyed by relative path.
    func snapshot(sourceID: Int64) async throws -> [String: SourceFile]
    /// Content any source other than `sourceID` held when last walked.
    func checksumsHeld(bySourcesOtherThan sourceID: Int64) async throws -> Set<Checksum>
    /// Records assets as if their originals were durable in the library; an existing checksum is left as it is.
    func insertAssets(_ assets: [AssetRecord]) async throws
    func mediaProbeCount() async throws -> Int
}

extension SQLiteCatalog: CatalogInspection {
    public func importItems() async throws -> [ItemRecord] {
        try await read { db in try ItemRecord.fetchAll(db, sql: "SELECT \(ItemSQL.columns) FROM import_item i "
            + "JOIN source s ON s.id = i.source_id LEFT JOIN asset a ON a.sha1 = i.sha1 ORDER BY i.id") }
    }

    public func snapshot(sourceID: Int64) async throws -> [String: SourceFile] {
        try await read { db in
            var result: [String: SourceFile] = [:]
            let rows = try SnapshotRow.filter(SnapshotRow.Columns.sourceID == sourceID).fetchCursor(db)
            while let row = try rows.next() { result[row.relativePath] = row.record }
            return result
        }
    }

    public func checksumsHeld(bySourcesOtherThan sourceID: Int64) async throws -> Set<Checksum> {
        try await read { db in
            Set(try String.fetchAll(db, sql: """
                SELECT DISTINCT sha1 FROM source_file WHERE source_id != ? AND sha1 IS NOT NULL
                """, arguments: [sourceID]).compactMap { Checksum(hex: $0) })
        }
    }

    public func insertAssets(_ assets: [AssetRecord]) async throws {
        try await write { db in for asset in assets { try asset.insert(db, onConflict: .ignore) } }
    }

    public func mediaProbeCount() async throws -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM media_probe") ?? 0 }
    }
}

extension PostgresCatalog: CatalogInspection {
    public func importItems() async throws -> [ItemRecord] { try await items(where: "true") }

    public func snapshot(sourceID: Int64) async throws -> [String: SourceFile] {
        return try await failing("read the snapshot of source \(sourceID)") { [self] in
            let rows = try await client.query("""
                SELECT relative_path, device, inode, size, mtime_ns, sha1, kind FROM cairn.source_file
                WHERE source_id = \(sourceID)
                """, logger: logger)
            var files: [String: SourceFile] = [:]
            for try await row in rows {
                let file = try SnapshotRow(from: PostgresRowDecoder(row)).record
                files[file.relativePath] = file
            }
            return files
        }
    }

    public func checksumsHeld(bySourcesOtherThan sourceID: Int64) async throws -> Set<Checksum> {
        return try await failing("read the content other sources hold") { [self] in
            let rows = try await client.query("""
                SELECT DISTINCT sha1 FROM cairn.source_file WHERE source_id <> \(sourceID) AND sha1 IS NOT NULL
                """, logger: logger)
            var checksums = Set<Checksum>()
            for try await hex in rows.decode(String.self) { if let checksum = Checksum(hex: hex) { checksums.insert(checksum) } }
            return checksums
        }
    }

    public func insertAssets(_ assets: [AssetRecord]) async throws {
        guard !assets.isEmpty else { return }
        return try await failing("record \(assets.count) assets") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.saveStageRows(StageRows(assets: assets), on: connection, logger: logger)
            }
        }
    }

    public func mediaProbeCount() async throws -> Int { try await count("cairn.media_probe") }
}

/// What only tests read or write of the SQLite catalog.
extension SQLiteCatalog {
    /// The names of the migrations applied, oldest first.
    public func appliedMigrations() async throws -> [String] {
        try await read { db in try Migrations.migrator.appliedMigrations(db) }
    }

    /// Records (or replaces) what probing an original found.
    public func saveMediaProbe(_ probe: MediaProbeRecord) async throws {
        try await write { db in try Self.saveMediaProbe(probe, in: db) }
    }

    /// Every derived file, by checksum then role.
    public func allDerivedFiles() async throws -> [DerivedFileRecord] {
        try await read { db in
            try DerivedFileRow.order(DerivedFileRow.Columns.sha1, DerivedFileRow.Columns.role).fetchAll(db).compactMap(\.record)
        }
    }
}
