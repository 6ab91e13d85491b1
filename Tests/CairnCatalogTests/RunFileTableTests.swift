import CairnCore
import CairnReconcileOracle
import CairnTesting
import Foundation
import GRDB
import Testing

@testable import CairnCatalog

/// What the SQLite run tables do inside (settled files left ungrouped, the snapshot's `in_library` marks, a sync's
/// comparison); what every backend's run tables must do is `RunTablesContractTests`.
@Suite struct RunFileTableTests {
    func checksum(_ seed: UInt8) -> Checksum { Checksum(bytes: [UInt8](repeating: seed, count: 20))! }

    /// A new catalog in a temporary folder (kept alive by the caller) with one source.
    func catalogWithSource() async throws -> (directory: TemporaryDirectory, catalog: SQLiteCatalog, source: Int64) {
        let directory = try TemporaryDirectory()
        let catalog = try SQLiteCatalog(path: directory.subpath("catalog.sqlite"))
        return (directory, catalog, try await catalog.sourceID(forRoot: "/src"))
    }

    func asset(_ seed: UInt8, firstSourcePath: String) -> AssetRecord {
        AssetRecord(checksum: checksum(seed), kind: .photo, size: 10, originalExtension: "jpg",
                    firstSourcePath: firstSourcePath, originalPath: "originals/\(firstSourcePath)", importedAt: Date(),
                    runID: nil)
    }

    /// Items the lanes handled, as the catalog holds them: planned, then moved to `state`; their lines as the
    /// scheduler hands them over.
    func handled(_ catalog: SQLiteCatalog, source: Int64, _ items: [(path: String, seed: UInt8, state: ItemState)])
        async throws -> [FileOutcomeEntry] {
        var records = try await catalog.planImportItems(items.map {
            ImportItem(relativePath: $0.path, sourceRoot: "/src", kind: .photo, byteCount: 10, checksum: checksum($0.seed))
        }, sourceID: source)
        for index in records.indices { records[index].state = items[index].state }
        try await catalog.saveImportItemStates(records, with: StageRows())
        return records.map { FileOutcomeEntry($0, leftUnfinished: false) }
    }

    func file(_ path: String, inode: UInt64, size: Int64 = 10, checksum: Checksum? = nil) -> SourceFile {
        SourceFile(relativePath: path, fingerprint: FileFingerprint(device: 1, inode: inode, size: size,
                                                                          modificationTimeNanoseconds: 100),
                         checksum: checksum, kind: .photo)
    }

    /// A file unchanged since a snapshot that marked its content in the library is settled: counted unchanged and
    /// never grouped. Losing the asset (the trash) or a new checksum takes the mark away.
    @Test func settledFilesAreNotGroupedAndLoseTheMarkWithTheirAsset() async throws {
        let (directory, catalog, source) = try await catalogWithSource()
        defer { withExtendedLifetime(directory) {} }
        try await catalog.updateSnapshot(sourceID: source, upserting: [
            file("a.jpg", inode: 1, checksum: checksum(1)), file("b.jpg", inode: 2, checksum: checksum(2)),
        ], removing: [])
        try await catalog.insertAssets([asset(1, firstSourcePath: "x1.jpg"), asset(2, firstSourcePath: "x2.jpg")])
        func marks() throws -> [String: Bool] {
            try catalog.pool.read { db in
                try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT relative_path, in_library FROM source_file")
                    .map { ($0[0] as String, $0[1] as Bool) })
            }
        }
        func groupedFiles(_ table: RunFileTable) throws -> Int {
            try catalog.pool.write { db in try Int.fetchOne(db, sql: "SELECT TOTAL(files) FROM temp.run_content") ?? -1 }
        }
        #expect(try marks() == ["a.jpg": false, "b.jpg": false])
        try await catalog.markSnapshotContentInLibrary(sourceID: source)
        #expect(try marks() == ["a.jpg": true, "b.jpg": true])

        let table = try RunFileTable(catalog: catalog, sourceID: source)
        try await table.append([file("a.jpg", inode: 1), file("b.jpg", inode: 2), file("c.jpg", inode: 3)])
        #expect(try await table.matchSnapshot().toHash == 1)
        var page = try await table.filesToHash(after: 0, limit: 10, byteLimit: 100)
        page[0].record.checksum = checksum(1)  // c.jpg holds a.jpg's content
        try await table.recordHashes(page, failed: [:], updatingSnapshot: true)
        #expect(try await table.classify() == ContentCounts(newContent: 0, newBytes: 0, duplicates: 1, unchanged: 2))
        #expect(try groupedFiles(table) == 1)  // c.jpg alone: a.jpg and b.jpg are settled
        // An item for content 1 (resumed from an earlier run) still goes to its first file, a.jpg.
        try await table.recordItems(handled(catalog, source: source, [("x1.jpg", 1, .ready)]))
        #expect(try await kinds(table) == ["imported", "unchanged", "duplicate"])
        #expect(try await table.outcomeCounts() == [.imported: 1, .duplicate: 1, .unchanged: 1])
        try await catalog.markSnapshotContentInLibrary(sourceID: source)
        #expect(try marks() == ["a.jpg": true, "b.jpg": true, "c.jpg": true])

        // Content 2 goes to the trash: b.jpg is no longer settled, and is new content again.
        try await catalog.markTrashed([(checksum: checksum(2), libraryPaths: ["originals/x2.jpg"])], runID: "r", at: Date())
        #expect(try marks()["b.jpg"] == false)
        // a.jpg gets a new checksum: its mark goes too.
        try await catalog.updateSnapshot(sourceID: source, upserting: [file("a.jpg", inode: 1, checksum: checksum(5))],
                                   removing: [])
        #expect(try marks() == ["a.jpg": false, "b.jpg": false, "c.jpg": true])
        let next = try RunFileTable(catalog: catalog, sourceID: source)
        try await next.append([file("a.jpg", inode: 1), file("b.jpg", inode: 2), file("c.jpg", inode: 3)])
        #expect(try await next.classify() == ContentCounts(newContent: 2, newBytes: 20, duplicates: 0, unchanged: 1))
        #expect(try await next.newContent(after: 0, limit: 10).map(\.record.relativePath) == ["a.jpg", "b.jpg"])
    }

    /// A file whose hashing failed keeps the snapshot's last checksum for reconciliation, and is not paged again.
    @Test func aFailedFileKeepsItsLastChecksumAndIsNotHashedTwice() async throws {
        let (directory, catalog, source) = try await catalogWithSource()
        defer { withExtendedLifetime(directory) {} }
        try await catalog.updateSnapshot(sourceID: source, upserting: [file("a.jpg", inode: 1, checksum: checksum(1))],
                                   removing: [])
        let table = try RunFileTable(catalog: catalog, sourceID: source)
        try await table.append([file("a.jpg", inode: 9)])
        #expect(try await table.matchSnapshot().toHash == 1)
        let page = try await table.filesToHash(after: 0, limit: 10, byteLimit: 100)
        try await table.recordHashes([], failed: [page[0].id: FailureReason(operation: "read", "I/O error")],
                               updatingSnapshot: true)
        #expect(try await table.filesToHash(after: 0, limit: 10, byteLimit: 100).isEmpty)
        #expect(try await table.checksums(inFolder: "").isEmpty)
        // A sync counts it with its last checksum, so it is not taken for deleted.
        #expect(try await table.compareWithHealthySnapshot().currentFiles == 1)
        #expect(try await table.classify() == ContentCounts())
        #expect(try await table.outcomeCounts() == [.failed: 1])
        #expect(try await lines(table) == [FileOutcomeEntry(path: "a.jpg", outcome: .failed(
            phase: .hashing, reason: FailureReason(operation: "read", "I/O error")))])
        // A new table starts empty.
        let next = try RunFileTable(catalog: catalog, sourceID: source)
        #expect(try await next.matchSnapshot().files == 0)
    }
    /// Settled files get no row of `run_file`, only runs of the snapshot (at most 64 files each); a file handed over
    /// out of order, new to the snapshot, splits the run its path falls in, so it is counted once.
    @Test func settledFilesAreRunsOfTheSnapshotAndAFileOutOfOrderSplitsOne() async throws {
        let (directory, catalog, source) = try await catalogWithSource()
        defer { withExtendedLifetime(directory) {} }
        let names = (0..<100).map { String(format: "f%03d.jpg", $0) }
        try await catalog.updateSnapshot(sourceID: source, upserting: names.indices.map {
            file(names[$0], inode: UInt64($0 + 1), checksum: checksum(UInt8($0 + 1)))
        }, removing: [])
        try await catalog.insertAssets(names.indices.map { asset(UInt8($0 + 1), firstSourcePath: names[$0]) })
        try await catalog.markSnapshotContentInLibrary(sourceID: source)
        let table = try RunFileTable(catalog: catalog, sourceID: source)
        try await table.append(names.indices.map { file(names[$0], inode: UInt64($0 + 1)) })
        func count(_ sql: String) throws -> Int { try catalog.pool.write { db in try Int.fetchOne(db, sql: sql) ?? -1 } }
        #expect(try count("SELECT COUNT(*) FROM temp.run_file") == 0)
        #expect(try count("SELECT COUNT(*) FROM temp.run_settled") == 2)  // 64 and 36
        // f010a.jpg, new, comes after f099.jpg (an archive's entries may): the first run is split around it.
        try await table.append([file("f010a.jpg", inode: 500)])
        #expect(try count("SELECT COUNT(*) FROM temp.run_settled") == 3)
        #expect(try await table.vanishedPaths().isEmpty)
        var page = try await table.filesToHash(after: 0, limit: 10, byteLimit: 100)
        #expect(page.map(\.record.relativePath) == ["f010a.jpg"])
        page[0].record.checksum = checksum(3)  // f002.jpg's content
        try await table.recordHashes(page, failed: [:], updatingSnapshot: true)
        #expect(try await table.classify() == ContentCounts(newContent: 0, newBytes: 0, duplicates: 1, unchanged: 100))
        #expect(try await table.checksums(inFolder: "").count == 101)
        #expect(try await table.compareWithHealthySnapshot().currentFiles == 101)
        try await table.recordItems(handled(catalog, source: source, [("x3.jpg", 3, .ready)]))
        let outcomes = try await lines(table)
        #expect(outcomes.map(\.path) == names + ["f010a.jpg"])
        #expect(outcomes.filter { $0.outcome.kind == .imported }.map(\.path) == ["f002.jpg"])
        #expect(outcomes.last?.outcome.kind == .duplicate)
    }

    func lines(_ table: RunFileTable) async throws -> [FileOutcomeEntry] {
        try await table.outcomes()
    }

    func kinds(_ table: RunFileTable) async throws -> [String] { try await lines(table).map(\.outcome.kind.rawValue) }

}

@Suite struct ImportItemPlanningTests {
    /// Planning an item looks its asset up by key: a scan of `asset` per item made a 100,000-file import quadratic.
    @Test func planningAnItemSearchesTheAssetByKeyNeverScansIt() throws {
        let directory = try TemporaryDirectory()
        let catalog = try SQLiteCatalog(path: directory.subpath("catalog.sqlite"))
        let plan = try catalog.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + SQLiteCatalog.planItemSQL(terminal: "0"),
                             arguments: ["a", 1, "p", "photo", 1, Date(), "a", "/r"])
                .map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("asset") })
        #expect(!plan.contains { $0.contains("SCAN asset") })
    }

}
