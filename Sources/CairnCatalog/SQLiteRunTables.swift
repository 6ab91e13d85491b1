import CairnCore
import Foundation

/// The SQLite catalog's run tables (`RunFileTable`) behind `RunTables`: each call one hop to the blocking pool.
public struct SQLiteRunTables: RunTables, RunTablesWrittenInPlace {
    public let table: RunFileTable

    public init(_ table: RunFileTable) { self.table = table }

    public var sourceID: Int64 { table.sourceID }
    private var catalog: Catalog { table.catalog }

    public func append(_ files: [SourceFile]) async throws {
        try await BlockingPool.run { [table] in try table.append(files) }
    }

    public func appendSidecars(_ files: [SourceFile]) async throws {
        try await BlockingPool.run { [table] in try table.appendSidecars(files) }
    }

    public func appendInPlace(_ files: [SourceFile]) throws { try table.append(files) }

    public func appendSidecarsInPlace(_ files: [SourceFile]) throws { try table.appendSidecars(files) }

    public func matchSnapshot() async throws -> SnapshotMatch {
        try await BlockingPool.run { [table] in try table.matchSnapshot() }
    }

    public func vanishedPaths() async throws -> [String] {
        try await BlockingPool.run { [table] in try table.vanishedPaths() }
    }

    public func filesToHash(after id: Int64, limit: Int, byteLimit: Int64) async throws -> [RunFile] {
        try await BlockingPool.run { [table] in try table.filesToHash(after: id, limit: limit, byteLimit: byteLimit) }
    }

    public func recordHashes(_ hashed: [RunFile], failed: [Int64: FailureReason], updatingSnapshot: Bool) async throws {
        try await BlockingPool.run { [table] in
            try table.recordHashes(hashed, failed: failed, updatingSnapshot: updatingSnapshot)
        }
    }

    public func classify() async throws -> ContentCounts {
        try await BlockingPool.run { [table] in try table.classify() }
    }

    public func newContent(after id: Int64, limit: Int) async throws -> [RunFile] {
        try await BlockingPool.run { [table] in try table.newContent(after: id, limit: limit) }
    }

    public func unfinishedImportItems(after id: ItemID, limit: Int, owingTransfer: Bool) async throws -> [ItemRecord] {
        try await BlockingPool.run { [table, catalog] in
            try catalog.unfinishedImportItems(after: id, limit: limit, owingTransfer: owingTransfer,
                                              excludingNewContentOf: table)
        }
    }

    public func unfinishedImportItemCount(owingTransfer: Bool) async throws -> Int {
        try await BlockingPool.run { [table, catalog] in
            try catalog.unfinishedImportItemCount(owingTransfer: owingTransfer, excludingNewContentOf: table)
        }
    }

    public func crashFailedImportItems() async throws -> [ItemRecord] {
        try await BlockingPool.run { [table, catalog] in
            try catalog.crashFailedImportItems(sourceID: table.sourceID, foundBy: table)
        }
    }

    public func recordItems(_ lines: [FileOutcomeEntry]) async throws {
        try await BlockingPool.run { [table] in try table.recordItems(lines) }
    }

    public func outcomeCounts() async throws -> [FileOutcome.Kind: Int] {
        try await BlockingPool.run { [table] in try table.outcomeCounts() }
    }

    public func outcomes() async throws -> [FileOutcomeEntry] {
        try await BlockingPool.run { [table] in
            var entries: [FileOutcomeEntry] = []
            try table.forEachOutcome { entries.append($0) }
            return entries
        }
    }

    public func failedItems() async throws -> [ImportFailure] {
        try await BlockingPool.run { [table] in try table.failedItems() }
    }

    public func sidecarsToLink(after last: RunSidecar?, limit: Int) async throws -> [RunSidecar] {
        try await BlockingPool.run { [table] in try table.sidecarsToLink(after: last, limit: limit) }
    }

    public func checksums(inFolder folder: String) async throws -> [String: Checksum] {
        try await BlockingPool.run { [table] in try table.checksums(inFolder: folder) }
    }

    public func compareWithHealthySnapshot() async throws -> SnapshotComparison {
        try await BlockingPool.run { [table] in try table.compareWithHealthySnapshot() }
    }

    public func scanSignals(sourceIsHealthy: Bool) async throws -> ScanSignals {
        try await BlockingPool.run { [table] in try table.scanSignals(sourceIsHealthy: sourceIsHealthy) }
    }

    public func absentContent(stamped: [Checksum], at now: Date) async throws -> [AbsentContent] {
        try await BlockingPool.run { [table] in try table.absentContent(stamped: stamped, at: now) }
    }

    public func contentMissingFromLibrary() async throws -> [Checksum] {
        try await BlockingPool.run { [table] in try table.contentMissingFromLibrary() }
    }

    public func lastSourcePaths(of checksums: [Checksum]) async throws -> [Checksum: String] {
        try await BlockingPool.run { [table] in try table.lastSourcePaths(of: checksums) }
    }

    public func commit(_ sync: SyncRecord, currentFiles: Int) async throws {
        try await BlockingPool.run { [table] in
            try ReconcileStore(catalog: table.catalog).commit(sync, scannedBy: table, currentFiles: currentFiles)
        }
    }
}

extension SQLiteCatalog: RunTablesCatalog {
    public func withRunTables<Value: Sendable>(sourceID: Int64, _ body: (any RunTables) async throws -> Value)
        async throws -> Value {
        try await catalog.withRunTables(sourceID: sourceID) { table in try await body(SQLiteRunTables(table)) }
    }
}
