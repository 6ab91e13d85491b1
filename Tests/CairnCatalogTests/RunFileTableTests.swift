import CairnCore
import CairnTesting
import Foundation
import GRDB
import Testing

@testable import CairnCatalog

@Suite struct RunFileTableTests {
    func checksum(_ seed: UInt8) -> Checksum { Checksum(bytes: [UInt8](repeating: seed, count: 20))! }

    /// A new catalog in a temporary folder (kept alive by the caller) with one source.
    func catalogWithSource() throws -> (directory: TemporaryDirectory, catalog: Catalog, source: Int64) {
        let directory = try TemporaryDirectory()
        let catalog = try Catalog(path: directory.subpath("catalog.sqlite"))
        return (directory, catalog, try catalog.sourceID(forRoot: "/src"))
    }

    func asset(_ seed: UInt8, firstSourcePath: String) -> AssetRecord {
        AssetRecord(checksum: checksum(seed), kind: .photo, size: 10, originalExtension: "jpg",
                    firstSourcePath: firstSourcePath, originalPath: "originals/\(firstSourcePath)", importedAt: Date(),
                    runID: nil)
    }

    /// Items the lanes handled, as the catalog holds them: planned, then moved to `state`; their lines as the
    /// scheduler hands them over.
    func handled(_ catalog: Catalog, source: Int64, _ items: [(path: String, seed: UInt8, state: ItemState)])
        throws -> [FileOutcomeEntry] {
        var records = try catalog.insertImportItems(items.map {
            ImportItem(relativePath: $0.path, sourceRoot: "/src", kind: .photo, byteCount: 10, checksum: checksum($0.seed))
        }, sourceID: source)
        for index in records.indices { records[index].state = items[index].state }
        try catalog.saveImportItemStates(records)
        return records.map { FileOutcomeEntry($0, leftUnfinished: false) }
    }

    func file(_ path: String, inode: UInt64, size: Int64 = 10, checksum: Checksum? = nil) -> SourceFile {
        SourceFile(relativePath: path, fingerprint: FileFingerprint(device: 1, inode: inode, size: size,
                                                                          modificationTimeNanoseconds: 100),
                         checksum: checksum, kind: .photo)
    }

    /// The snapshot decides what is cached, changed and gone; hashing fills in checksums and the snapshot;
    /// classifying sorts new content (first file per checksum, in walk order), duplicates and unchanged files.
    @Test func aRunsFilesGoFromWalkToSnapshotToContentWithoutAnInMemoryList() throws {
        let (directory, catalog, source) = try catalogWithSource()
        defer { withExtendedLifetime(directory) {} }
        // Last run: a.jpg (content 1, in the library), b.jpg (content 2), gone.jpg.
        try catalog.updateSnapshot(sourceID: source, upserting: [
            file("a.jpg", inode: 1, checksum: checksum(1)), file("b.jpg", inode: 2, checksum: checksum(2)),
            file("gone.jpg", inode: 3, checksum: checksum(3)),
        ], removing: [])
        try catalog.insertAssets([asset(1, firstSourcePath: "a.jpg")])

        let table = try RunFileTable(catalog: catalog, sourceID: source)
        // This walk: a.jpg unchanged, b.jpg changed (new inode), c.jpg and d.jpg new.
        try table.append([file("a.jpg", inode: 1), file("b.jpg", inode: 20)])
        try table.append([file("c.jpg", inode: 4, size: 30), file("d.jpg", inode: 5, size: 40)])
        let match = try table.matchSnapshot()
        #expect(match == RunFileTable.SnapshotMatch(files: 4, bytes: 90, toHash: 3, bytesToHash: 80, vanished: 1))
        #expect(try table.vanishedPaths() == ["gone.jpg"])

        let page = try table.filesToHash(after: 0, limit: 10, byteLimit: 45)
        #expect(page.map(\.record.relativePath) == ["b.jpg", "c.jpg"])  // d.jpg would pass 45 bytes
        var hashed = page
        hashed[0].record.checksum = checksum(4)
        hashed[1].record.checksum = checksum(1)  // c.jpg holds the library's content: a duplicate
        try table.recordHashes(hashed, failed: [:], updatingSnapshot: true)
        let rest = try table.filesToHash(after: page.last!.id, limit: 10, byteLimit: 45)
        #expect(rest.map(\.record.relativePath) == ["d.jpg"])
        var last = rest
        last[0].record.checksum = checksum(4)  // d.jpg holds b.jpg's new content: a duplicate too
        try table.recordHashes(last, failed: [:], updatingSnapshot: true)
        #expect(try table.filesToHash(after: 0, limit: 10, byteLimit: 1000).isEmpty)
        #expect(try catalog.snapshot(sourceID: source)["b.jpg"]?.checksum == checksum(4))

        let counts = try table.classify()
        #expect(counts == RunFileTable.ContentCounts(newContent: 1, newBytes: 10, duplicates: 2, unchanged: 1))
        let new = try table.newContent(after: 0, limit: 10)
        #expect(new.map(\.record.relativePath) == ["b.jpg"])
        #expect(new.map(\.record.checksum) == [checksum(4)])
        #expect(try table.newContent(after: new[0].id, limit: 10).isEmpty)
        #expect(try table.checksums(inFolder: "") == ["a.jpg": checksum(1), "b.jpg": checksum(4), "c.jpg": checksum(1),
                                                      "d.jpg": checksum(4)])

        // Before the lanes: b.jpg is new content never reached.
        #expect(try kinds(table) == ["unchanged", "unfinished", "duplicate", "duplicate"])
        try table.recordItems(handled(catalog, source: source, [("b.jpg", 4, .ready)]))
        #expect(try kinds(table) == ["unchanged", "imported", "duplicate", "duplicate"])
        // The same sorting, counted in SQL: a.jpg unchanged, b.jpg imported, c.jpg and d.jpg duplicates.
        #expect(try table.outcomeCounts() == [.unchanged: 1, .imported: 1, .duplicate: 2])

        // An item resumed from an earlier run for library content goes to its first file, a.jpg; the item's state
        // is what it says, read from `import_item`.
        try table.recordItems(handled(catalog, source: source, [("old/a.jpg", 1, .ready)]))
        #expect(try kinds(table) == ["imported", "imported", "duplicate", "duplicate"])
        #expect(try table.outcomeCounts() == [.imported: 2, .duplicate: 2])
    }

    /// A file unchanged since a snapshot that marked its content in the library is settled: counted unchanged and
    /// never grouped. Losing the asset (the trash) or a new checksum takes the mark away.
    @Test func settledFilesAreNotGroupedAndLoseTheMarkWithTheirAsset() throws {
        let (directory, catalog, source) = try catalogWithSource()
        defer { withExtendedLifetime(directory) {} }
        try catalog.updateSnapshot(sourceID: source, upserting: [
            file("a.jpg", inode: 1, checksum: checksum(1)), file("b.jpg", inode: 2, checksum: checksum(2)),
        ], removing: [])
        try catalog.insertAssets([asset(1, firstSourcePath: "x1.jpg"), asset(2, firstSourcePath: "x2.jpg")])
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
        try catalog.markSnapshotContentInLibrary(sourceID: source)
        #expect(try marks() == ["a.jpg": true, "b.jpg": true])

        let table = try RunFileTable(catalog: catalog, sourceID: source)
        try table.append([file("a.jpg", inode: 1), file("b.jpg", inode: 2), file("c.jpg", inode: 3)])
        #expect(try table.matchSnapshot().toHash == 1)
        var page = try table.filesToHash(after: 0, limit: 10, byteLimit: 100)
        page[0].record.checksum = checksum(1)  // c.jpg holds a.jpg's content
        try table.recordHashes(page, failed: [:], updatingSnapshot: true)
        #expect(try table.classify() == RunFileTable.ContentCounts(newContent: 0, newBytes: 0, duplicates: 1, unchanged: 2))
        #expect(try groupedFiles(table) == 1)  // c.jpg alone: a.jpg and b.jpg are settled
        // An item for content 1 (resumed from an earlier run) still goes to its first file, a.jpg.
        try table.recordItems(handled(catalog, source: source, [("x1.jpg", 1, .ready)]))
        #expect(try kinds(table) == ["imported", "unchanged", "duplicate"])
        #expect(try table.outcomeCounts() == [.imported: 1, .duplicate: 1, .unchanged: 1])
        try catalog.markSnapshotContentInLibrary(sourceID: source)
        #expect(try marks() == ["a.jpg": true, "b.jpg": true, "c.jpg": true])

        // Content 2 goes to the trash: b.jpg is no longer settled, and is new content again.
        try catalog.markTrashed([(checksum: checksum(2), libraryPaths: ["originals/x2.jpg"])], runID: "r", at: Date())
        #expect(try marks()["b.jpg"] == false)
        // a.jpg gets a new checksum: its mark goes too.
        try catalog.updateSnapshot(sourceID: source, upserting: [file("a.jpg", inode: 1, checksum: checksum(5))],
                                   removing: [])
        #expect(try marks() == ["a.jpg": false, "b.jpg": false, "c.jpg": true])
        let next = try RunFileTable(catalog: catalog, sourceID: source)
        try next.append([file("a.jpg", inode: 1), file("b.jpg", inode: 2), file("c.jpg", inode: 3)])
        #expect(try next.classify() == RunFileTable.ContentCounts(newContent: 2, newBytes: 20, duplicates: 0, unchanged: 1))
        #expect(try next.newContent(after: 0, limit: 10).map(\.record.relativePath) == ["a.jpg", "b.jpg"])
    }

    /// Rows keep the order they were given in, across the 64-row statements they go in by.
    @Test func filesKeepTheWalksOrderAcrossStatements() throws {
        let (directory, catalog, source) = try catalogWithSource()
        defer { withExtendedLifetime(directory) {} }
        let paths = (0..<150).map { "f\(($0 * 37) % 150).jpg" }
        try catalog.updateSnapshot(sourceID: source, upserting: [file(paths[70], inode: 70, checksum: checksum(9))],
                                   removing: [])
        let table = try RunFileTable(catalog: catalog, sourceID: source)
        try table.append(paths.enumerated().map { file($1, inode: UInt64($0)) })
        let toHash = try table.filesToHash(after: 0, limit: 1000, byteLimit: 1 << 30)
        #expect(toHash.map(\.record.relativePath) == paths.enumerated().filter { $0.offset != 70 }.map(\.element))
        #expect(try table.matchSnapshot().toHash == 149)
    }

    /// A file whose hashing failed keeps the snapshot's last checksum for reconciliation, and is not paged again.
    @Test func aFailedFileKeepsItsLastChecksumAndIsNotHashedTwice() throws {
        let (directory, catalog, source) = try catalogWithSource()
        defer { withExtendedLifetime(directory) {} }
        try catalog.updateSnapshot(sourceID: source, upserting: [file("a.jpg", inode: 1, checksum: checksum(1))],
                                   removing: [])
        let table = try RunFileTable(catalog: catalog, sourceID: source)
        try table.append([file("a.jpg", inode: 9)])
        #expect(try table.matchSnapshot().toHash == 1)
        let page = try table.filesToHash(after: 0, limit: 10, byteLimit: 100)
        try table.recordHashes([], failed: [page[0].id: FailureReason(operation: "read", "I/O error")],
                               updatingSnapshot: true)
        #expect(try table.filesToHash(after: 0, limit: 10, byteLimit: 100).isEmpty)
        #expect(try table.checksums(inFolder: "").isEmpty)
        // A sync counts it with its last checksum, so it is not taken for deleted.
        #expect(try table.compareWithHealthySnapshot().currentFiles == 1)
        #expect(try table.classify() == RunFileTable.ContentCounts())
        #expect(try table.outcomeCounts() == [.failed: 1])
        #expect(try lines(table) == [FileOutcomeEntry(path: "a.jpg", outcome: .failed(
            phase: .hashing, reason: FailureReason(operation: "read", "I/O error")))])
        // A new table starts empty.
        let next = try RunFileTable(catalog: catalog, sourceID: source)
        #expect(try next.matchSnapshot().files == 0)
    }
    func lines(_ table: RunFileTable) throws -> [FileOutcomeEntry] {
        var lines: [FileOutcomeEntry] = []
        try table.forEachOutcome { lines.append($0) }
        return lines
    }

    func kinds(_ table: RunFileTable) throws -> [String] { try lines(table).map(\.outcome.kind.rawValue) }

    /// What becomes of a handled item is read from where `import_item` says it stands, by the same rule the
    /// scheduler used: failed with its reason, archived (still owing a lane), a duplicate, withdrawn; an item the run
    /// left unfinished resumes where it stands; a handled item no file of this walk holds comes after the walk.
    @Test func aHandledItemsOutcomeIsReadFromItsStoredState() throws {
        let (directory, catalog, source) = try catalogWithSource()
        defer { withExtendedLifetime(directory) {} }
        let failure = ItemFailure(phase: .thumbnail, reason: FailureReason(operation: "decode", "truncated"),
                                  attempts: 2, retryable: false)
        let retryable = ItemFailure(phase: .metadata, reason: "busy", attempts: 1, retryable: true)
        try catalog.withRunTables(sourceID: source) { table in
            let names = ["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg", "f.jpg"]
            try table.append(names.enumerated().map { file($1, inode: UInt64($0 + 1)) })
            var page = try table.filesToHash(after: 0, limit: 10, byteLimit: 1000)
            for index in page.indices { page[index].record.checksum = checksum(UInt8(index + 1)) }
            try table.recordHashes(page, failed: [:], updatingSnapshot: true)
            _ = try table.classify()
            var ended = try handled(catalog, source: source, [
                ("a.jpg", 1, .failed(failure)), ("b.jpg", 2, .probing), ("c.jpg", 3, .ready), ("d.jpg", 4, .cancelled),
                ("e.jpg", 5, .failed(retryable)), ("elsewhere/g.jpg", 7, .ready),
            ])
            ended[4].outcome = .unfinished(resumeAt: .metadata)
            try table.recordItems(ended)
            var duplicate = try #require(try catalog.importItem(checksum(3)))
            duplicate.isDuplicate = true
            try catalog.saveImportItemStates([duplicate])

            let expected: [FileOutcome] = [
                .failed(phase: .thumbnail, reason: failure.reason), .archived, .duplicate, .skipped(reason: "cancelled"),
                .unfinished(resumeAt: .metadata), .unfinished(resumeAt: .transfer), .imported,
            ]
            #expect(try lines(table).map(\.outcome) == expected)
            #expect(try lines(table).map(\.path) == names + ["elsewhere/g.jpg"])
            #expect(try table.outcomeCounts() == [.failed: 1, .archived: 1, .duplicate: 1, .skipped: 1, .unfinished: 2,
                                                  .imported: 1])
            #expect(try table.failedItems() == [ImportFailure(relativePath: "a.jpg", phase: .thumbnail,
                                                               reason: failure.reason, retryable: false)])
        }
    }

    /// Sidecars wait in the run tables by folder, so a folder's are read together; one linked as it is now is not
    /// read again, one changed since it was linked is.
    @Test func sidecarsAreReadAFolderAtATimeAndLinkedOnesAreLeftAlone() throws {
        let (directory, catalog, source) = try catalogWithSource()
        defer { withExtendedLifetime(directory) {} }
        try catalog.insertAssets([asset(1, firstSourcePath: "a/IMG_1.jpg")])
        let table = try RunFileTable(catalog: catalog, sourceID: source)
        // Walk order interleaves folder "a" with its sub-folder "a/b".
        let walked = ["a/IMG_1.jpg.json", "a/b/IMG_2.xmp", "a/c.json", "top.xmp", "a/linked.xmp", "a/changed.xmp"]
        try table.appendSidecars(walked.enumerated().map { file($1, inode: UInt64($0 + 1)) })
        for path in ["a/linked.xmp", "a/changed.xmp"] {
            try catalog.linkSidecar(SidecarRecord(checksum: checksum(path == "a/linked.xmp" ? 8 : 9), asset: checksum(1),
                                                  kind: "xmp", path: "sidecars/\(path)", sourcePath: path,
                                                  sourceSize: path == "a/linked.xmp" ? 10 : 11,
                                                  sourceModificationTimeNanoseconds: 100, linkedAt: Date()))
        }
        var read: [String] = []
        var last: RunFileTable.SidecarFile?
        while case let page = try table.sidecarsToLink(after: last, limit: 2), let end = page.last {
            read += page.map(\.record.relativePath)
            last = end
        }
        // Folder by folder ("" < "a" < "a/b"), then by path; "a/linked.xmp" is linked as it is and not read.
        #expect(read == ["top.xmp", "a/IMG_1.jpg.json", "a/c.json", "a/changed.xmp", "a/b/IMG_2.xmp"])
    }

    /// A sidecar is matched against the media beside it only: a folder's files, not its subfolders' nor those of a
    /// folder whose name it begins.
    @Test func aFoldersFilesAreReadWithoutTheRestOfTheSource() throws {
        let (directory, catalog, source) = try catalogWithSource()
        defer { withExtendedLifetime(directory) {} }
        let table = try RunFileTable(catalog: catalog, sourceID: source)
        let paths = ["top.jpg", "d/a.jpg", "d/e/b.jpg", "d.b/c.jpg", "d0/d.jpg", "dd/e.jpg", "d/f.jpg"]
        try table.append(paths.enumerated().map { file($1, inode: UInt64($0 + 1)) })
        let page = try table.filesToHash(after: 0, limit: 10, byteLimit: 1000)
        try table.recordHashes(page.map {
            var hashed = $0
            hashed.record.checksum = checksum(UInt8($0.id))
            return hashed
        }, failed: [:], updatingSnapshot: false)
        #expect(try table.checksums(inFolder: "d") == ["d/a.jpg": checksum(2), "d/f.jpg": checksum(7)])
        #expect(try table.checksums(inFolder: "") == ["top.jpg": checksum(1)])
        #expect(try table.checksums(inFolder: "d/e") == ["d/e/b.jpg": checksum(3)])
        #expect(try table.checksums(inFolder: "missing").isEmpty)
    }
}

@Suite struct ImportItemPlanningTests {
    /// Planning an item looks its asset up by key: a scan of `asset` per item made a 100,000-file import quadratic.
    @Test func planningAnItemSearchesTheAssetByKeyNeverScansIt() throws {
        let directory = try TemporaryDirectory()
        let catalog = try Catalog(path: directory.subpath("catalog.sqlite"))
        let plan = try catalog.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + Catalog.planItemSQL(terminal: "0"),
                             arguments: ["a", 1, "p", "photo", 1, Date(), "a", "/r"])
                .map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("asset") })
        #expect(!plan.contains { $0.contains("SCAN asset") })
    }

}
