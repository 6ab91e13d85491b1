import CairnCatalog
import CairnCore
import CairnTesting
import Foundation
import Glibc
import Testing

@testable import CairnImport
@testable import CairnLibrary
@testable import CairnStages

@Suite struct ImportRunTests {
    /// A valid little JPEG (the media lanes read every import) with its own bytes for each (count, seed).
    func bytes(_ count: Int, _ seed: UInt8) -> Data { (try? DistinctJPEG.data(byteCount: count, seed: seed)) ?? Data() }

    func sha1sum(_ path: String) throws -> String {
        String(String(decoding: try ExternalTool.run(["sha1sum", path]), as: UTF8.self).prefix(40))
    }

    /// One import into the library at `libraryRoot`; its summary, the library and its catalog, left open to read.
    func importOnce(_ source: String, _ libraryRoot: String) async throws -> (ImportSummary, Library, SQLiteCatalog) {
        let library = try Library(root: libraryRoot)
        let catalog = try library.openCatalog()
        let summary = try await ImportRun(library: library, catalog: catalog,
                                          options: ImportOptions(source: source)).run()
        return (summary, library, catalog)
    }

    func filesBelow(_ root: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root)
        var result: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                result.append(path)
            }
        }
        return result.sorted()
    }

    @Test func everySourceFileIsInTheLibraryByteForByte() async throws {
        let source = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        try source.write(bytes(300_000, 1), to: "DCIM/IMG_0001.JPG")
        try source.write(bytes(120_000, 2), to: "DCIM/IMG_0002.png")
        try source.write(bytes(90_000, 3), to: "video/clip one.mp4")
        try source.write(bytes(300_000, 1), to: "copies/same as first.jpg")
        try source.write(Data("not media".utf8), to: "notes.txt")
        let (summary, library, catalog) = try await importOnce(source.path, libraryFolder.path)

        #expect(summary.counts.filesSeen == 4)
        #expect(summary.counts.imported == 3)
        #expect(summary.counts.duplicates == 1)
        #expect(summary.counts.skipped == 1)
        #expect(summary.failures.isEmpty)
        #expect(summary.exitStatus == .success)
        #expect(try await catalog.assetCount() == 3)
        for relative in ["DCIM/IMG_0001.JPG", "DCIM/IMG_0002.png", "video/clip one.mp4", "copies/same as first.jpg"] {
            let hex = try sha1sum(source.subpath(relative))
            let asset = try #require(try await catalog.asset(Checksum(hex: hex)!))
            let stored = library.layout.absolute(asset.originalPath)
            #expect(try sha1sum(stored) == hex)
            #expect(try Data(contentsOf: URL(fileURLWithPath: stored)) == Data(contentsOf: URL(fileURLWithPath: source.subpath(relative))))
        }
        let first = try #require(try await catalog.asset(Checksum(hex: try sha1sum(source.subpath("DCIM/IMG_0001.JPG")))!))
        #expect(first.originalPath.hasSuffix(".jpg"))
        #expect(first.firstSourcePath == "DCIM/IMG_0001.JPG")
        #expect(filesBelow(library.layout.temporaryDirectory).isEmpty)
    }

    @Test func secondImportOfUnchangedFolderHashesAndCopiesNothing() async throws {
        let source = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        for index in 0..<20 { try source.write(bytes(5_000 + index, UInt8(index)), to: "f\(index).jpg") }
        _ = try await importOnce(source.path, libraryFolder.path)
        let (second, _, _) = try await importOnce(source.path, libraryFolder.path)
        #expect(second.counts.hashed == 0)
        #expect(second.counts.bytesHashed == 0)
        #expect(second.counts.bytesCopied == 0)
        #expect(second.counts.imported == 0)
        #expect(second.counts.unchanged == 20)
    }

    @Test func changedAndNewFilesAreTheOnlyOnesHashedAgain() async throws {
        let source = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        for index in 0..<5 { try source.write(bytes(4_000, UInt8(index)), to: "f\(index).jpg") }
        _ = try await importOnce(source.path, libraryFolder.path)
        try source.write(bytes(4_100, 99), to: "f2.jpg")
        try source.write(bytes(4_200, 77), to: "new.jpg")
        let (second, _, catalog) = try await importOnce(source.path, libraryFolder.path)
        #expect(second.counts.hashed == 2)
        #expect(second.counts.imported == 2)
        #expect(try await catalog.assetCount() == 7)
    }

    @Test func symlinkOutsideTheSourceIsNeitherFollowedNorImported() async throws {
        let outside = try TemporaryDirectory(), source = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        let secret = try outside.write(bytes(1_000, 5), to: "secret.jpg")
        try source.write(bytes(1_000, 6), to: "mine.jpg")
        try FileManager.default.createSymbolicLink(atPath: source.subpath("link.jpg"), withDestinationPath: secret)
        let (summary, _, catalog) = try await importOnce(source.path, libraryFolder.path)
        #expect(summary.symlinksSkipped == ["link.jpg"])
        #expect(try await catalog.assetCount() == 1)
        #expect(try await catalog.asset(Checksum(hex: try sha1sum(secret))!) == nil)
    }

    @Test func fileVanishingBetweenScanAndHashFailsWithReasonAndTheRunGoesOn() async throws {
        let source = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        try source.write(bytes(1_000, 1), to: "good.jpg")
        let doomed = try source.write(bytes(1_000, 2), to: "gone.jpg")
        let library = try Library(root: libraryFolder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        var run = ImportRun(library: library, catalog: catalog, options: ImportOptions(source: source.path))
        run.hooks.afterScan = { _ in unlink(doomed) }  // the card is pulled right after the walk
        let summary = try await run.run()
        #expect(summary.failures.map(\.relativePath) == ["gone.jpg"])
        // A value: the call that failed and the system's reason, without the file (the report names it once).
        #expect(summary.failures.first?.reason.reason == "No such file or directory")
        #expect(summary.failures.first?.reason.operation != nil)
        #expect(summary.failures.first?.reason.description.contains("gone.jpg") == false)
        #expect(summary.failures.first?.phase == .hashing)
        #expect(summary.exitStatus == .someFilesFailed)
        #expect(try await catalog.assetCount() == 1)
        #expect(try await catalog.failures(runID: summary.runID).map(\.relativePath) == ["gone.jpg"])
    }

    @Test func vanishedFileLeavesNoPartialOrFinalFile() async throws {
        // A file deleted between hashing and copying: the copy fails cleanly.
        let source = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        try source.write(bytes(1_000, 1), to: "good.jpg")
        let library = try Library(root: libraryFolder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        let store = OriginalsStore(layout: library.layout)
        let checksum = Checksum(bytes: [UInt8](repeating: 1, count: 20))!
        #expect(throws: (any Error).self) {
            try store.place(sourcePath: source.subpath("vanished.jpg"), checksum: checksum,
                            relativePath: library.layout.originalRelativePath(checksum, fileExtension: "jpg"), hasher: .init())
        }
        #expect(filesBelow(library.layout.temporaryDirectory).isEmpty)
        #expect(filesBelow(library.layout.originalsDirectory).isEmpty)
    }

    /// Hardening issue, fault 4: only a verified content mismatch is damage, and damage is kept where no run
    /// empties it; a file that cannot be hashed is left in place and the error is reported.
    @Test func aDamagedOriginalIsQuarantinedForGoodAndAnUnhashableOneIsLeftAlone() async throws {
        let source = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        let data = bytes(30_000, 7)
        try source.write(data, to: "a.jpg")
        let library = try Library(root: libraryFolder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        let checksum = try #require(Checksum(hex: try sha1sum(source.subpath("a.jpg"))))
        let relative = library.layout.originalRelativePath(checksum, fileExtension: "jpg")
        let damaged = Data("bit rot".utf8) + data.dropFirst(7)
        try libraryFolder.write(damaged, to: relative)

        let placement = try OriginalsStore(layout: library.layout).place(
            sourcePath: source.subpath("a.jpg"), checksum: checksum, relativePath: relative, hasher: .init())
        guard case .replacedDamaged(_, let quarantinedAt) = placement else {
            Issue.record("expected the damaged file to be replaced, got \(placement)")
            return
        }
        #expect(quarantinedAt.hasPrefix(library.layout.quarantineDirectory + "/"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: quarantinedAt)) == damaged)
        #expect(try Data(contentsOf: URL(fileURLWithPath: library.layout.absolute(relative))) == data)
        // A later run empties tmp/, never quarantine/.
        _ = try await ImportRun(library: library, catalog: catalog, options: ImportOptions(source: source.path)).run()
        #expect(FileManager.default.fileExists(atPath: quarantinedAt))

        // Something at the content address that cannot be hashed (here a folder) is an error, not damage.
        let other = try #require(Checksum(hex: String(repeating: "ab", count: 20)))
        let otherRelative = library.layout.originalRelativePath(other, fileExtension: "jpg")
        try FileManager.default.createDirectory(atPath: library.layout.absolute(otherRelative), withIntermediateDirectories: true)
        #expect(throws: (any Error).self) {
            try OriginalsStore(layout: library.layout).place(
                sourcePath: source.subpath("a.jpg"), checksum: other, relativePath: otherRelative, hasher: .init())
        }
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: library.layout.absolute(otherRelative), isDirectory: &isFolder))
        #expect(isFolder.boolValue)
    }

    @Test func leftoversOfAKilledRunAreCleanedAndAVerifiedOriginalIsKept() async throws {
        let source = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        let data = bytes(50_000, 4)
        try source.write(data, to: "a.jpg")
        let library = try Library(root: libraryFolder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        // A run killed after the rename but before the catalog commit, and one killed mid-copy.
        let checksum = try #require(Checksum(hex: try sha1sum(source.subpath("a.jpg"))))
        let relative = library.layout.originalRelativePath(checksum, fileExtension: "jpg")
        try libraryFolder.write(data, to: relative)
        try libraryFolder.write(Data("partial".utf8), to: "tmp/\(checksum.hex).123-1.partial")
        let summary = try await ImportRun(library: library, catalog: catalog, options: ImportOptions(source: source.path)).run()
        #expect(summary.temporaryFilesRemoved == 1)
        #expect(summary.counts.imported == 1)
        #expect(summary.counts.bytesCopied == 0)
        #expect(try await catalog.asset(checksum)?.originalPath == relative)
        #expect(filesBelow(library.layout.temporaryDirectory).isEmpty)
    }

    /// A queue's workers write into `tmp/` while a run holds the lock (its own worker starts before the sweep): a
    /// sweep given a cutoff removes only what was untouched since, never a file being written.
    @Test func aSweepWithACutoffSparesWhatQueueWorkersAreWriting() throws {
        let libraryFolder = try TemporaryDirectory()
        let library = try Library(root: libraryFolder.path)
        try libraryFolder.write(Data("old".utf8), to: "tmp/ab/old-thumb.1-1.partial.webp")
        try libraryFolder.write(Data("old".utf8), to: "tmp/old.2-1.partial")
        try libraryFolder.write(Data("new".utf8), to: "tmp/ab/new-thumb.3-1.partial.webp")
        let dayAgo = Date().addingTimeInterval(-2 * 86_400)
        for old in ["tmp/ab/old-thumb.1-1.partial.webp", "tmp/old.2-1.partial"] {
            try FileManager.default.setAttributes([.modificationDate: dayAgo], ofItemAtPath: libraryFolder.subpath(old))
        }
        #expect(library.removeLeftoverTemporaryFiles(untouchedSince: Date().addingTimeInterval(-86_400)) == 2)
        #expect(filesBelow(library.layout.temporaryDirectory) == ["ab/new-thumb.3-1.partial.webp"])
        #expect(library.removeLeftoverTemporaryFiles() == 1)
        #expect(filesBelow(library.layout.temporaryDirectory).isEmpty)
    }

    @Test func damagedFileAtAContentAddressIsReplacedWithTheRightBytes() async throws {
        let source = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        let data = bytes(20_000, 8)
        try source.write(data, to: "a.jpg")
        let library = try Library(root: libraryFolder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        let checksum = try #require(Checksum(hex: try sha1sum(source.subpath("a.jpg"))))
        let relative = library.layout.originalRelativePath(checksum, fileExtension: "jpg")
        try libraryFolder.write(Data("bit rot".utf8), to: relative)
        _ = try await ImportRun(library: library, catalog: catalog, options: ImportOptions(source: source.path)).run()
        #expect(try Data(contentsOf: URL(fileURLWithPath: library.layout.absolute(relative))) == data)
    }

    @Test func libraryInsideItsSourceIsNotImportedIntoItself() async throws {
        let source = try TemporaryDirectory()
        try source.write(bytes(2_000, 1), to: "photo.jpg")
        _ = try await importOnce(source.path, source.subpath("library"))
        let (second, _, catalog) = try await importOnce(source.path, source.subpath("library"))
        #expect(second.counts.filesSeen == 1)
        #expect(try await catalog.assetCount() == 1)
    }

    @Test func missingSourceStopsTheRunWithAClearMessage() async throws {
        let libraryFolder = try TemporaryDirectory()
        await #expect {
            try await importOnce(libraryFolder.subpath("not-mounted"), libraryFolder.path)
        } throws: { error in
            "\(error)".contains("not-mounted") && "\(error)".contains("does not exist")
        }
    }

    @Test func defaultLibraryFollowsTheEnvironment() {
        #expect(LibraryLayout.defaultRoot(environment: ["CAIRN_LIBRARY": "/x", "HOME": "/h"]) == "/x")
        #expect(LibraryLayout.defaultRoot(environment: ["XDG_DATA_HOME": "/d", "HOME": "/h"]) == "/d/cairn/library")
        #expect(LibraryLayout.defaultRoot(environment: ["HOME": "/h"]) == "/h/.local/share/cairn/library")
    }
}

/// Hardening issue, fault 7: a reader's brief shared lock (`cairn status`, `dry-run` starting) does not turn a
/// starting run away, and a run opened `exclusive` holds the lock before its catalog is opened.
@Suite struct LockRaceTests {
    @Test func aBriefReaderDoesNotMakeAStartingRunExit75() async throws {
        let folder = try TemporaryDirectory()
        _ = try LibraryLock(libraryRoot: folder.path)  // create the lock file, then let it go
        let released = DispatchSemaphore(value: 0)
        let box = ReaderBox(try ReaderLock(libraryRoot: folder.path))
        // A thread of its own: the Dispatch pool may be busy with the rest of the suite.
        Thread {
            usleep(200_000)
            box.release()
            released.signal()
        }.start()
        let writer = try await LibraryLock.take(libraryRoot: folder.path)
        released.wait()
        withExtendedLifetime(writer) {}
    }

    @Test func anExclusiveLibraryHoldsTheLockBeforeItsCatalogOpens() async throws {
        let folder = try TemporaryDirectory()
        try await Library.withExclusiveAccess(root: folder.path) { first, _ in
            #expect(first.lock != nil)
            await #expect(throws: LibraryLockedError.self) { try await Library.withExclusiveAccess(root: folder.path) { _, _ in } }
        }
        // Given up when the scope ends.
        try await Library.withExclusiveAccess(root: folder.path) { again, _ in #expect(again.lock != nil) }
    }
}

/// Holds a reader lock until `release`.
final class ReaderBox: @unchecked Sendable {
    private var reader: ReaderLock?
    init(_ reader: ReaderLock) { self.reader = reader }
    func release() { reader = nil }
}

/// Hardening issue, fault 5: a phase that times out is abandoned by its lane, but the run waits for its work to
/// return before it lets go of the library, so nothing writes the catalog after the lock is released.
@Suite struct AbandonedWorkTests {
    @Test func theRunEndsOnlyWhenItsTimedOutWorkHasReturned() async throws {
        let source = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        // Big enough that a thumbnail's work outlasts its timeout by far even when the suite's load delays the
        // timeout's watcher (at 1600x1200, and once at 4000x3000 under a full suite, the work returned first).
        for index in 0..<6 {
            try MediaFixtures.jpeg(at: source.subpath("IMG_\(index).jpg"), width: 4800 + 16 * index, height: 3600)
        }
        let library = try Library(root: libraryFolder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        var options = ImportOptions(source: source.path)
        // A thumbnail timeout far below a real decode: every thumbnail phase times out and is abandoned.
        options.pipeline = try options.pipeline.applying(laneSpec: "timeout.thumbnail=1ms")
        options.pipeline.maxAttempts = 1
        let run = ImportRun(library: library, catalog: catalog, options: options)
        let summary = try await run.run()
        #expect(summary.counts.failed > 0, "the thumbnails were expected to time out")
        #expect(summary.failures.contains { $0.reason.description.contains("timed out") })
        #expect(run.work.running == 0, "abandoned work still running after the run ended")
        library.close()
    }
}

/// Hardening issue, TOCTOU: a source folder swapped for a symbolic link between the scan and the open is not
/// followed out of the source (here the link leads to a FIFO, which an open through the link would block on).
@Suite(.timeLimit(.minutes(1))) struct SwappedFolderTests {
    @Test func aFolderSwappedForALinkAfterTheScanIsRefusedNotFollowed() async throws {
        let source = try TemporaryDirectory(), outside = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: source.subpath("sub"), withIntermediateDirectories: true)
        try MediaFixtures.jpeg(at: source.subpath("sub/IMG_1.jpg"), width: 64, height: 48)
        try MediaFixtures.jpeg(at: source.subpath("IMG_2.jpg"), width: 64, height: 64)
        #expect(mkfifo(outside.subpath("IMG_1.jpg"), 0o644) == 0)
        let library = try Library(root: libraryFolder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        var run = ImportRun(library: library, catalog: catalog, options: ImportOptions(source: source.path))
        let sub = source.subpath("sub"), moved = source.subpath("sub-before"), target = outside.path
        run.hooks.afterScan = { _ in
            rename(sub, moved)
            symlink(target, sub)
        }
        let summary = try await run.run()
        #expect(summary.failures.map(\.relativePath) == ["sub/IMG_1.jpg"])
        #expect(summary.counts.imported == 1)  // IMG_2.jpg, untouched by the swap
        library.close()
    }

    /// The library side: a folder of the library swapped for a link to elsewhere (before the run here; during it,
    /// the rename is made relative to folders opened without links) is refused, and nothing lands outside.
    @Test(arguments: ["originals", "derived"])
    func aLibraryFolderSwappedForALinkIsRefusedAndNothingLandsOutside(folder: String) async throws {
        let source = try TemporaryDirectory(), outside = try TemporaryDirectory(), libraryFolder = try TemporaryDirectory()
        let picture = try MediaFixtures.jpeg(at: source.subpath("IMG_1.jpg"), width: 64, height: 48)
        let hex = String(decoding: try ExternalTool.run(["sha1sum", picture]).prefix(40), as: UTF8.self)
        let library = try Library(root: libraryFolder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        #expect(symlink(outside.path, libraryFolder.subpath("\(folder)/\(hex.prefix(2))")) == 0)
        let run = ImportRun(library: library, catalog: catalog, options: ImportOptions(source: source.path))
        let summary = try await run.run()
        #expect(summary.failures.map(\.relativePath) == ["IMG_1.jpg"])
        #expect(summary.failures.first?.reason.description.contains("a symbolic link in the library is refused") == true,
                "\(summary.failures)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        library.close()
    }
}

@Suite struct HashWorkerTests {
    @Test func theNumberAskedForWinsWhateverTheFiles() {
        #expect(ImportRun.hashWorkers(requested: 3, cores: 2, files: 10, bytes: 10) == 3)
        #expect(ImportRun.hashWorkers(requested: 1, cores: 8, files: 10, bytes: 10 << 30) == 1)
    }

    @Test func smallFilesGetFourThreadsACoreAndBigOnesOneACore() {
        #expect(ImportRun.hashWorkers(requested: nil, cores: 2, files: 2048, bytes: 2048 * 4096) == 8)
        #expect(ImportRun.hashWorkers(requested: nil, cores: 8, files: 2048, bytes: 2048 * 4096) == 16,
                "at most 16")
        #expect(ImportRun.hashWorkers(requested: nil, cores: 2, files: 100, bytes: 100 * (ImportRun.smallFileBytes + 1)) == 2)
        #expect(ImportRun.hashWorkers(requested: nil, cores: 2, files: 0, bytes: 0) == 2)
    }
}

/// More walks at once in one process than the blocking pool has threads, each feeding its run tables: a walk writes
/// SQLite's tables from its own thread, so none waits for a pool thread another walk holds (they all did, once, and
/// the whole test suite hung).
@Suite struct ConcurrentWalkTests {
    @Test func moreWalksAtOnceThanThePoolHasThreadsAllFinish() async throws {
        let folder = try TemporaryDirectory()
        let walks = BlockingPool.threadCount + 8
        let batch = (0..<500).map { index in
            SourceFile(relativePath: "DCIM/\(index).jpg",
                       fingerprint: FileFingerprint(device: 1, inode: UInt64(index), size: 1, modificationTimeNanoseconds: 1),
                       checksum: nil, kind: .photo)
        }
        let finished = Locked(0)
        let ready = Barrier(count: walks)
        let allDone = AsyncStream<Void>.makeStream()
        for index in 0..<walks {
            let catalog = try SQLiteCatalog(path: folder.subpath("catalog-\(index).sqlite"))
            Task {
                defer {
                    catalog.close()
                    if finished.withLock({ $0 += 1; return $0 }) == walks { allDone.continuation.finish() }
                }
                do {
                    let sourceID = try await catalog.sourceID(forRoot: "/src")
                    let rows = try await catalog.withRunTables(sourceID: sourceID) { tables in
                        let appender = RunTablesAppender(tables)
                        // Every walk starts once all are ready, so they hold the pool's threads together.
                        await ready.arrive()
                        // Five batches each: more than the two an appender lets wait.
                        try await BlockingPool.run {
                            for round in 0..<5 {
                                try appender.append(batch.map { var file = $0; file.relativePath = "\(round)/" + file.relativePath; return file })
                            }
                        }
                        try await appender.finish()
                        return try await tables.matchSnapshot().files
                    }
                    #expect(rows == 5 * batch.count)
                } catch {
                    Issue.record(error)
                }
            }
        }
        // A deadlock would hang the suite; the guard ends the wait and fails the test instead (how long the walks
        // take is not checked).
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { for await _ in allDone.stream {}; return !Task.isCancelled }
            group.addTask { try? await Task.sleep(for: .seconds(300)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(ended, "\(finished.withLock { $0 }) of \(walks) walks finished")
    }
}

/// Lets its callers on once `count` of them arrived.
private actor Barrier {
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private let count: Int

    init(count: Int) { self.count = count }

    func arrive() async {
        if waiting.count + 1 == count {
            waiting.forEach { $0.resume() }
            waiting = []
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}
