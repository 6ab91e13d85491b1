@testable import CairnCatalog
import CairnCore
@testable import CairnPostgresCatalog
import Foundation
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
        try await BlockingPool.run { [catalog] in try catalog.importItems() }
    }

    public func snapshot(sourceID: Int64) async throws -> [String: SourceFile] {
        try await BlockingPool.run { [catalog] in try catalog.snapshot(sourceID: sourceID) }
    }

    public func checksumsHeld(bySourcesOtherThan sourceID: Int64) async throws -> Set<Checksum> {
        try await BlockingPool.run { [catalog] in try catalog.checksumsHeld(bySourcesOtherThan: sourceID) }
    }

    public func insertAssets(_ assets: [AssetRecord]) async throws {
        try await BlockingPool.run { [catalog] in try catalog.insertAssets(assets) }
    }

    public func mediaProbeCount() async throws -> Int {
        try await BlockingPool.run { [catalog] in try catalog.mediaProbeCount() }
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
