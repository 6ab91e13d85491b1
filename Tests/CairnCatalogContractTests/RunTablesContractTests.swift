import CairnCatalog
import CairnCore
import CairnReconcileOracle
import Foundation
import Testing

/// What every catalog backend must do with a run's tables (the walk, its checksums, its content, what became of
/// each file, its sidecars): each test runs on every `CatalogBackend` with the same expectations.
@Suite struct RunTablesContractTests {
    static func checksum(_ seed: UInt8) -> Checksum { Checksum(bytes: [UInt8](repeating: seed, count: 20))! }

    static func file(_ path: String, inode: UInt64, size: Int64 = 10, checksum: Checksum? = nil) -> SourceFile {
        SourceFile(relativePath: path, fingerprint: FileFingerprint(device: 1, inode: inode, size: size,
                                                                    modificationTimeNanoseconds: 100),
                   checksum: checksum, kind: .photo)
    }

    static func asset(_ seed: UInt8, firstSourcePath: String) -> AssetRecord {
        AssetRecord(checksum: checksum(seed), kind: .photo, size: 10, originalExtension: "jpg",
                    firstSourcePath: firstSourcePath, originalPath: "originals/\(firstSourcePath)",
                    importedAt: Date(timeIntervalSince1970: 1_795_000_000), runID: nil)
    }

    /// Items the lanes handled, as the catalog holds them: planned, then moved to `state`; their lines as the
    /// scheduler hands them over.
    static func handled(_ catalog: any CatalogUnderTest, source: Int64,
                        _ items: [(path: String, seed: UInt8, state: ItemState)]) async throws -> [FileOutcomeEntry] {
        var records = try await catalog.planImportItems(items.map {
            ImportItem(relativePath: $0.path, sourceRoot: "/src", kind: .photo, byteCount: 10, checksum: checksum($0.seed))
        }, sourceID: source)
        for index in records.indices { records[index].state = items[index].state }
        try await catalog.saveImportItemStates(records, with: StageRows())
        return records.map { FileOutcomeEntry($0, leftUnfinished: false) }
    }

    /// Items `p<seed>.jpg` of content `seed`, failed for good by the crash-loop guard.
    static func failByCrashes(_ catalog: any CatalogUnderTest, source: Int64, seeds: [Int]) async throws {
        let crashed = ItemFailure(phase: .thumbnail, reason: "crashed the worker", attempts: 1, retryable: false)
        var records = try await catalog.planImportItems(seeds.map {
            ImportItem(relativePath: "p\($0).jpg", sourceRoot: "/src", kind: .photo, byteCount: 10,
                       checksum: checksum(UInt8($0)))
        }, sourceID: source)
        for index in records.indices {
            records[index].state = .failed(crashed)
            records[index].crashCount = 2
        }
        try await catalog.saveImportItemStates(records, with: StageRows())
    }

    static func kinds(_ tables: any RunTables) async throws -> [String] {
        try await tables.outcomes().map(\.outcome.kind.rawValue)
    }

    /// Hashes every file still to hash, giving file `id` the checksum `seed(id)`.
    static func hashAll(_ tables: any RunTables, updatingSnapshot: Bool = true, seed: (Int64) -> UInt8) async throws {
        let page = try await tables.filesToHash(after: 0, limit: 1000, byteLimit: 1 << 30)
        try await tables.recordHashes(page.map {
            var hashed = $0
            hashed.record.checksum = checksum(seed($0.id))
            return hashed
        }, failed: [:], updatingSnapshot: updatingSnapshot)
    }

    /// The snapshot decides what is cached, changed and gone; hashing fills in checksums and the snapshot;
    /// classifying sorts new content (first file per checksum, in walk order), duplicates and unchanged files.
    @Test(arguments: CatalogBackend.allCases)
    func aRunsFilesGoFromWalkToSnapshotToContent(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/src")
            // Last run: a.jpg (content 1, in the library), b.jpg (content 2), gone.jpg.
            try await catalog.updateSnapshot(sourceID: source, upserting: [
                Self.file("a.jpg", inode: 1, checksum: Self.checksum(1)), Self.file("b.jpg", inode: 2, checksum: Self.checksum(2)),
                Self.file("gone.jpg", inode: 3, checksum: Self.checksum(3)),
            ], removing: [])
            try await catalog.insertAssets([Self.asset(1, firstSourcePath: "a.jpg")])
            try await catalog.withRunTables(sourceID: source) { tables in
                // This walk: a.jpg unchanged, b.jpg changed (new inode), c.jpg and d.jpg new.
                try await tables.append([Self.file("a.jpg", inode: 1), Self.file("b.jpg", inode: 20)])
                try await tables.append([Self.file("c.jpg", inode: 4, size: 30), Self.file("d.jpg", inode: 5, size: 40)])
                #expect(try await tables.matchSnapshot()
                        == SnapshotMatch(files: 4, bytes: 90, toHash: 3, bytesToHash: 80, vanished: 1))
                #expect(try await tables.vanishedPaths() == ["gone.jpg"])

                let page = try await tables.filesToHash(after: 0, limit: 10, byteLimit: 45)
                #expect(page.map(\.record.relativePath) == ["b.jpg", "c.jpg"])  // d.jpg would pass 45 bytes
                var hashed = page
                hashed[0].record.checksum = Self.checksum(4)
                hashed[1].record.checksum = Self.checksum(1)  // c.jpg holds the library's content: a duplicate
                try await tables.recordHashes(hashed, failed: [:], updatingSnapshot: true)
                var rest = try await tables.filesToHash(after: page.last!.id, limit: 10, byteLimit: 45)
                #expect(rest.map(\.record.relativePath) == ["d.jpg"])
                rest[0].record.checksum = Self.checksum(4)  // d.jpg holds b.jpg's new content: a duplicate too
                try await tables.recordHashes(rest, failed: [:], updatingSnapshot: true)
                #expect(try await tables.filesToHash(after: 0, limit: 10, byteLimit: 1000).isEmpty)
                #expect(try await catalog.snapshot(sourceID: source)["b.jpg"]?.checksum == Self.checksum(4))

                #expect(try await tables.classify() == ContentCounts(newContent: 1, newBytes: 10, duplicates: 2, unchanged: 1))
                let new = try await tables.newContent(after: 0, limit: 10)
                #expect(new.map(\.record.relativePath) == ["b.jpg"])
                #expect(new.map(\.record.checksum) == [Self.checksum(4)])
                #expect(try await tables.newContent(after: new[0].id, limit: 10).isEmpty)
                #expect(try await tables.checksums(inFolder: "") == [
                    "a.jpg": Self.checksum(1), "b.jpg": Self.checksum(4), "c.jpg": Self.checksum(1), "d.jpg": Self.checksum(4),
                ])

                // Before the lanes: b.jpg is new content never reached.
                #expect(try await Self.kinds(tables) == ["unchanged", "unfinished", "duplicate", "duplicate"])
                try await tables.recordItems(Self.handled(catalog, source: source, [("b.jpg", 4, .ready)]))
                #expect(try await Self.kinds(tables) == ["unchanged", "imported", "duplicate", "duplicate"])
                #expect(try await tables.outcomeCounts() == [.unchanged: 1, .imported: 1, .duplicate: 2])

                // An item resumed from an earlier run for library content goes to its first file, a.jpg.
                try await tables.recordItems(Self.handled(catalog, source: source, [("old/a.jpg", 1, .ready)]))
                #expect(try await Self.kinds(tables) == ["imported", "imported", "duplicate", "duplicate"])
                #expect(try await tables.outcomeCounts() == [.imported: 2, .duplicate: 2])
            }
        }
    }

    /// The walk is matched against the snapshot batch by batch: rows gone before, between and after the batches
    /// count as vanished; a batch out of bytewise order (never the walk's own) still finds each file's row; and
    /// names beyond ASCII are in the order of their UTF-8 bytes, as the catalog keys them.
    @Test(arguments: CatalogBackend.allCases)
    func theSnapshotIsMatchedAcrossBatchesInAnyOrder(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/src")
            let kept = ["b.jpg", "d/x.jpg", "d/é.jpg", "f.jpg", "h.jpg", "é/1.jpg"]
            let gone = ["a.jpg", "c.jpg", "d/y.jpg", "g.jpg", "z.jpg"]
            try await catalog.updateSnapshot(sourceID: source, upserting: (kept + gone).enumerated().map {
                Self.file($0.element, inode: UInt64($0.offset + 1), checksum: Self.checksum(UInt8($0.offset + 1)))
            }, removing: [])
            func walked(_ path: String) -> SourceFile {
                Self.file(path, inode: UInt64(kept.firstIndex(of: path)! + 1))
            }
            #expect(PathOrder.precedes("d/x.jpg", "d/é.jpg") && PathOrder.precedes("h.jpg", "é/1.jpg"))
            try await catalog.withRunTables(sourceID: source) { tables in
                try await tables.append(["b.jpg", "d/x.jpg"].map(walked))
                try await tables.append(["h.jpg", "d/é.jpg", "f.jpg"].map(walked))  // out of order
                try await tables.append(["é/1.jpg"].map(walked))
                #expect(try await tables.matchSnapshot()
                        == SnapshotMatch(files: 6, bytes: 60, toHash: 0, bytesToHash: 0, vanished: 5))
                #expect(try await tables.vanishedPaths() == gone)
                #expect(try await tables.filesToHash(after: 0, limit: 10, byteLimit: 1 << 30).isEmpty)
                var expected: [String: Checksum] = [:]
                for path in kept where !path.contains("/") { expected[path] = Self.checksum(UInt8(kept.firstIndex(of: path)! + 1)) }
                #expect(try await tables.checksums(inFolder: "") == expected)
                #expect(try await tables.classify() == ContentCounts(newContent: 6, newBytes: 60, duplicates: 0, unchanged: 0))
            }
        }
    }

    /// A file unchanged since a snapshot that marked its content in the library is settled: counted unchanged and
    /// never taken for new content. Losing the asset (the trash) or a new checksum takes the mark away.
    @Test(arguments: CatalogBackend.allCases)
    func settledFilesLoseTheMarkWithTheirAsset(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/src")
            try await catalog.updateSnapshot(sourceID: source, upserting: [
                Self.file("a.jpg", inode: 1, checksum: Self.checksum(1)), Self.file("b.jpg", inode: 2, checksum: Self.checksum(2)),
            ], removing: [])
            try await catalog.insertAssets([Self.asset(1, firstSourcePath: "x1.jpg"), Self.asset(2, firstSourcePath: "x2.jpg")])
            try await catalog.markSnapshotContentInLibrary(sourceID: source)
            let walk = [Self.file("a.jpg", inode: 1), Self.file("b.jpg", inode: 2), Self.file("c.jpg", inode: 3)]
            try await catalog.withRunTables(sourceID: source) { tables in
                try await tables.append(walk)
                #expect(try await tables.matchSnapshot().toHash == 1)
                try await Self.hashAll(tables) { _ in 1 }  // c.jpg holds a.jpg's content
                #expect(try await tables.classify() == ContentCounts(newContent: 0, newBytes: 0, duplicates: 1, unchanged: 2))
                // An item for content 1 (resumed from an earlier run) still goes to its first file, a.jpg.
                try await tables.recordItems(Self.handled(catalog, source: source, [("x1.jpg", 1, .ready)]))
                #expect(try await Self.kinds(tables) == ["imported", "unchanged", "duplicate"])
                #expect(try await tables.outcomeCounts() == [.imported: 1, .duplicate: 1, .unchanged: 1])
            }
            try await catalog.markSnapshotContentInLibrary(sourceID: source)

            // Content 2 goes to the trash and a.jpg gets a new checksum: both are new content again.
            try await catalog.markTrashed([(checksum: Self.checksum(2), libraryPaths: ["originals/x2.jpg"])], runID: "r",
                                          at: Date(timeIntervalSince1970: 1_795_000_000))
            try await catalog.updateSnapshot(sourceID: source, upserting: [Self.file("a.jpg", inode: 1, checksum: Self.checksum(5))],
                                             removing: [])
            try await catalog.withRunTables(sourceID: source) { tables in
                try await tables.append(walk)
                #expect(try await tables.matchSnapshot() == SnapshotMatch(files: 3, bytes: 30, toHash: 0, bytesToHash: 0))
                #expect(try await tables.classify() == ContentCounts(newContent: 2, newBytes: 20, duplicates: 0, unchanged: 1))
                #expect(try await tables.newContent(after: 0, limit: 10).map(\.record.relativePath) == ["a.jpg", "b.jpg"])
            }
        }
    }

    /// Rows keep the walk's order across batches and statements; a file whose hashing failed is not paged again,
    /// and a new run's tables start empty.
    @Test(arguments: CatalogBackend.allCases)
    func filesKeepTheWalksOrderAndFailuresAreNotHashedTwice(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/src")
            let paths = (0..<150).map { "f\(($0 * 37) % 150).jpg" }
            try await catalog.updateSnapshot(sourceID: source, upserting: [Self.file(paths[70], inode: 70, checksum: Self.checksum(9))],
                                             removing: [])
            try await catalog.withRunTables(sourceID: source) { tables in
                let walk = paths.enumerated().map { Self.file($1, inode: UInt64($0)) }
                try await tables.append(Array(walk[..<100]))
                try await tables.append(Array(walk[100...]))
                let toHash = try await tables.filesToHash(after: 0, limit: 1000, byteLimit: 1 << 30)
                #expect(toHash.map(\.record.relativePath) == paths.enumerated().filter { $0.offset != 70 }.map(\.element))
                #expect(try await tables.matchSnapshot().toHash == 149)
                // Its category is kept with it (the equality below compares it too).
                let reason = FailureReason(operation: "read", "I/O error", category: .io)
                try await tables.recordHashes([], failed: [toHash[0].id: reason], updatingSnapshot: true)
                #expect(try await tables.filesToHash(after: 0, limit: 1000, byteLimit: 1 << 30).count == 148)
                #expect(try await tables.outcomeCounts() == [.failed: 1, .unchanged: 1, .unfinished: 148])
                #expect(try await tables.outcomes().first == FileOutcomeEntry(path: paths[0], outcome: .failed(
                    phase: .hashing, reason: reason)))
            }
            try await catalog.withRunTables(sourceID: source) { tables in
                let match = try await tables.matchSnapshot()
                #expect(match == SnapshotMatch(vanished: 1))
            }
        }
    }

    /// What becomes of a handled item is read from where its import item stands: failed with its reason, archived,
    /// a duplicate, withdrawn; an item the run left unfinished resumes where it stands; a handled item no file of
    /// this walk holds comes after the walk. Items earlier runs left are paged without this run's new content.
    @Test(arguments: CatalogBackend.allCases)
    func aHandledItemsOutcomeIsReadFromItsStoredState(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/src")
            let failure = ItemFailure(phase: .thumbnail, reason: FailureReason(operation: "decode", "truncated", category: .corrupt),
                                      attempts: 2, retryable: false)
            let retryable = ItemFailure(phase: .metadata, reason: "busy", attempts: 1, retryable: true)
            // Left by an earlier run: one unfinished item of content this walk does not hold, one this walk holds as new.
            _ = try await Self.handled(catalog, source: source, [("old/h.jpg", 8, .probing), ("old/a.jpg", 1, .queued)])
            try await catalog.withRunTables(sourceID: source) { tables in
                let names = ["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg", "f.jpg"]
                try await tables.append(names.enumerated().map { Self.file($1, inode: UInt64($0 + 1)) })
                try await Self.hashAll(tables) { UInt8($0) }
                #expect(try await tables.classify().newContent == 6)
                #expect(try await tables.unfinishedImportItemCount(owingTransfer: false) == 1)
                let earlier = try await tables.unfinishedImportItems(after: ItemID(0), limit: 10, owingTransfer: false)
                #expect(earlier.map(\.item.relativePath) == ["old/h.jpg"])
                #expect(try await tables.unfinishedImportItemCount(owingTransfer: true) == 0)

                var ended = try await Self.handled(catalog, source: source, [
                    ("a.jpg", 1, .failed(failure)), ("b.jpg", 2, .probing), ("c.jpg", 3, .ready), ("d.jpg", 4, .cancelled),
                    ("e.jpg", 5, .failed(retryable)), ("elsewhere/g.jpg", 7, .ready),
                ])
                ended[4].outcome = .unfinished(resumeAt: .metadata)
                try await tables.recordItems(ended)
                var duplicate = try #require(try await catalog.importItems().first { $0.item.checksum == Self.checksum(3) })
                duplicate.isDuplicate = true
                try await catalog.saveImportItemStates([duplicate], with: StageRows())

                let expected: [FileOutcome] = [
                    .failed(phase: .thumbnail, reason: failure.reason), .archived, .duplicate, .skipped(reason: "cancelled"),
                    .unfinished(resumeAt: .metadata), .unfinished(resumeAt: .transfer), .imported,
                ]
                let outcomes = try await tables.outcomes()
                #expect(outcomes.map(\.outcome) == expected)
                #expect(outcomes.map(\.path) == names + ["elsewhere/g.jpg"])
                #expect(try await tables.outcomeCounts() == [.failed: 1, .archived: 1, .duplicate: 1, .skipped: 1,
                                                             .unfinished: 2, .imported: 1])
                #expect(try await tables.failedItems() == [ImportFailure(relativePath: "a.jpg", phase: .thumbnail,
                                                                         reason: failure.reason, retryable: false)])
            }
        }
    }

    /// Sidecars wait by folder, so a folder's are read together (bytewise: "" < "a" < "a/b"); one linked as it is
    /// now is not read again, one changed since it was linked is. A folder's media are its own files only.
    @Test(arguments: CatalogBackend.allCases)
    func sidecarsAreReadAFolderAtATimeBesideTheirFoldersMedia(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/src")
            try await catalog.insertAssets([Self.asset(1, firstSourcePath: "a/IMG_1.jpg")])
            for path in ["a/linked.xmp", "a/changed.xmp"] {
                try await catalog.linkSidecar(SidecarRecord(
                    checksum: Self.checksum(path == "a/linked.xmp" ? 8 : 9), asset: Self.checksum(1), kind: "xmp",
                    path: "sidecars/\(path)", sourcePath: path, sourceSize: path == "a/linked.xmp" ? 10 : 11,
                    sourceModificationTimeNanoseconds: 100, linkedAt: Date(timeIntervalSince1970: 1_795_000_000)))
            }
            try await catalog.withRunTables(sourceID: source) { tables in
                let walked = ["a/IMG_1.jpg.json", "a/b/IMG_2.xmp", "a/c.json", "top.xmp", "a/linked.xmp", "a/changed.xmp",
                              "a-b/x.xmp"]
                try await tables.appendSidecars(walked.enumerated().map { Self.file($1, inode: UInt64($0 + 1)) })
                var read: [String] = []
                var last: RunSidecar?
                while case let page = try await tables.sidecarsToLink(after: last, limit: 2), let end = page.last {
                    read += page.map(\.record.relativePath)
                    last = end
                }
                #expect(read == ["top.xmp", "a/IMG_1.jpg.json", "a/c.json", "a/changed.xmp", "a-b/x.xmp", "a/b/IMG_2.xmp"])

                let paths = ["top.jpg", "d/a.jpg", "d/e/b.jpg", "d.b/c.jpg", "d0/d.jpg", "dd/e.jpg", "d/f.jpg"]
                try await tables.append(paths.enumerated().map { Self.file($1, inode: UInt64($0 + 1)) })
                try await Self.hashAll(tables, updatingSnapshot: false) { UInt8($0) }
                #expect(try await tables.checksums(inFolder: "d") == ["d/a.jpg": Self.checksum(2), "d/f.jpg": Self.checksum(7)])
                #expect(try await tables.checksums(inFolder: "") == ["top.jpg": Self.checksum(1)])
                #expect(try await tables.checksums(inFolder: "d/e") == ["d/e/b.jpg": Self.checksum(3)])
                #expect(try await tables.checksums(inFolder: "missing").isEmpty)
                #expect(try await catalog.snapshot(sourceID: source).isEmpty)
            }
        }
    }

    /// The crash-loop guard's failures of the run's source are the run's while the walk still finds their content.
    @Test(arguments: CatalogBackend.allCases)
    func crashFailuresAreTheRunsWhileTheWalkFindsThem(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/src")
            try await Self.failByCrashes(catalog, source: source, seeds: [1, 2])
            try await catalog.withRunTables(sourceID: source) { tables in
                try await tables.append([Self.file("p1.jpg", inode: 1)])
                try await Self.hashAll(tables) { _ in 1 }
                #expect(try await tables.crashFailedImportItems().map(\.item.relativePath) == ["p1.jpg"])
            }
        }
    }

    /// A rescan's settled files (unchanged, their content in the library) are files of the walk like any other:
    /// listed in walk order with their outcomes, matched by sidecars, counted by a sync, found for crash failures.
    /// A gone row, a changed file, a new one and batch boundaries among them change nothing of that (SQLite keeps
    /// settled files as runs of the snapshot, of at most 64, rather than as rows).
    @Test(arguments: CatalogBackend.allCases)
    func settledFilesAreFilesOfTheWalkLikeAnyOther(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/src")
            let names = (0..<150).map { String(format: "f%03d.jpg", $0) }
            // f130.jpg holds f005.jpg's content; f070x.jpg is gone from this walk.
            func seed(_ index: Int) -> UInt8 { index == 130 ? 6 : UInt8(index + 1) }
            try await catalog.updateSnapshot(sourceID: source, upserting: names.indices.map {
                Self.file(names[$0], inode: UInt64($0 + 1), checksum: Self.checksum(seed($0)))
            } + [Self.file("f070x.jpg", inode: 900, checksum: Self.checksum(200))], removing: [])
            try await catalog.insertAssets(names.indices.filter { $0 != 130 }.map {
                Self.asset(seed($0), firstSourcePath: names[$0])
            } + [Self.asset(200, firstSourcePath: "f070x.jpg")])
            try await catalog.markSnapshotContentInLibrary(sourceID: source)
            try await Self.failByCrashes(catalog, source: source, seeds: [10, 200])

            try await catalog.withRunTables(sourceID: source) { tables in
                var walk = names.indices.map { Self.file(names[$0], inode: UInt64($0 + 1)) }
                walk[100] = Self.file("f100.jpg", inode: 1000)  // changed
                walk.insert(Self.file("f120a.jpg", inode: 1001), at: 121)  // new
                for start in stride(from: 0, to: walk.count, by: 40) {
                    try await tables.append(Array(walk[start..<min(start + 40, walk.count)]))
                }
                #expect(try await tables.matchSnapshot()
                        == SnapshotMatch(files: 151, bytes: 1510, toHash: 2, bytesToHash: 20, vanished: 1))
                #expect(try await tables.vanishedPaths() == ["f070x.jpg"])
                try await Self.hashAll(tables) { _ in 201 }  // f100.jpg and f120a.jpg: the same new content
                #expect(try await tables.classify()
                        == ContentCounts(newContent: 1, newBytes: 10, duplicates: 1, unchanged: 149))

                let checksums = try await tables.checksums(inFolder: "")
                #expect(checksums.count == 151)
                #expect(checksums["f000.jpg"] == Self.checksum(1) && checksums["f149.jpg"] == Self.checksum(150))
                #expect(checksums["f130.jpg"] == Self.checksum(6) && checksums["f120a.jpg"] == Self.checksum(201))
                #expect(checksums["f070x.jpg"] == nil)
                #expect(try await tables.compareWithHealthySnapshot().currentFiles == 151)
                // The walk holds content 10 (f009.jpg, settled), not content 200.
                #expect(try await tables.crashFailedImportItems().map(\.item.relativePath) == ["p10.jpg"])

                // An item for content 6 goes to its first file in walk order, f005.jpg, not f130.jpg.
                try await tables.recordItems(Self.handled(catalog, source: source, [("x6.jpg", 6, .ready)]))
                let outcomes = try await tables.outcomes()
                #expect(outcomes.map(\.path) == walk.map(\.relativePath))
                let kinds = Dictionary(uniqueKeysWithValues: outcomes.map { ($0.path, $0.outcome.kind) })
                #expect(kinds["f005.jpg"] == .imported && kinds["f130.jpg"] == .unchanged)
                #expect(kinds["f120a.jpg"] == .duplicate)
                #expect(outcomes.filter { $0.outcome.kind == .unchanged }.count == 148)
                #expect(try await tables.outcomeCounts() == [.imported: 1, .unchanged: 148, .duplicate: 1, .unfinished: 1])
            }
        }
    }
}
