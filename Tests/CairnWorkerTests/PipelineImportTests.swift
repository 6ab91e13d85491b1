import CairnCore
import CairnHashing
import CairnPipeline
import CairnReconcileOracle
import CairnS3
import CairnStore
import CairnTesting
import Foundation
import GRDB
import Testing

@testable import CairnCatalog
@testable import CairnLibrary
@testable import CairnStages

/// The real stages end to end: FFmpeg-made media through transfer, probe, thumbnail and clip, into SQLite.
@Suite struct PipelineImportTests {
    let source: TemporaryDirectory
    let libraryFolder: TemporaryDirectory
    let library: Library
    let catalog: SQLiteCatalog

    init() throws {
        source = try TemporaryDirectory(prefix: "cairn-pipeline-source")
        libraryFolder = try TemporaryDirectory(prefix: "cairn-pipeline-library")
        library = try Library(root: libraryFolder.path)
        catalog = try library.openCatalog()
    }

    /// Events as they came, for assertions.
    final class EventLog: Sendable {
        private let events = Locked<[PipelineEvent]>([])
        func record(_ event: PipelineEvent) { events.withLock { $0.append(event) } }
        var all: [PipelineEvent] { events.withLock { $0 } }
        var phasesStarted: [(String, Lane)] {
            all.compactMap { if case .phaseStarted(let item, let lane, _) = $0 { (item.relativePath, lane) } else { nil } }
        }
        var retries: Int { all.count { if case .retryScheduled = $0 { true } else { false } } }
    }

    func content(_ relativePaths: [String]) throws -> [ImportItem] {
        let hasher = try FileHasher()
        return try relativePaths.map { path in
            let hashed = try hasher.hash(path: source.subpath(path))
            let kind: MediaKind = path.hasSuffix(".mp4") ? .video : .photo
            return ImportItem(relativePath: path, sourceRoot: source.path, kind: kind, byteCount: hashed.fingerprint.size,
                              checksum: hashed.checksum)
        }
    }

    func runImport(_ content: [ImportItem], log: EventLog = EventLog(), clips: Bool = true, derivatives: Bool = true,
                   cancellation: PipelineCancellation = PipelineCancellation(),
                   into other: (library: Library, catalog: SQLiteCatalog)? = nil) async throws -> PipelineRunResult {
        let (library, catalog) = other ?? (library, catalog)
        var configuration = PipelineConfiguration.defaults(cores: 2)
        configuration.clipsEnabled = clips
        configuration.derivativesEnabled = derivatives
        configuration.backoff = RetryPolicy(base: .milliseconds(1), cap: .milliseconds(5), jitter: 1...1.2)
        let sourceID = try await catalog.sourceID(forRoot: source.path)
        return try await PipelineImport(library: library, catalog: catalog, configuration: configuration, sourceID: sourceID)
            .run(newItems: content, onEvent: log.record, cancellation: cancellation)
    }

    /// Files left in `tmp/` or its shards.
    func temporaryFiles() throws -> [String] {
        let root = library.layout.temporaryDirectory
        return try FileManager.default.subpathsOfDirectory(atPath: root).filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
    }

    func exists(_ relativePath: String) -> Bool {
        FileManager.default.fileExists(atPath: library.layout.absolute(relativePath))
    }

    // MARK: End to end

    @Test func stillsAndAVideoEndReadyWithProbesThumbnailsPreviewsAndClips() async throws {
        try FileManager.default.createDirectory(atPath: source.subpath("DCIM"), withIntermediateDirectories: true)
        // An upright JPEG of flat colours, light enough to be its own preview, and a turned one.
        try MediaFixtures.jpegWithExif(at: source.subpath("DCIM/IMG_0001.jpg"), orientation: 1)
        try MediaFixtures.jpegWithExif(at: source.subpath("DCIM/IMG_0002.jpg"))
        try MediaFixtures.pngWithAlpha(at: source.subpath("DCIM/logo.png"), width: 200, height: 120)
        try MediaFixtures.video(at: source.subpath("DCIM/MOV_0003.mp4"), width: 160, height: 90, seconds: 1)
        let planned = try content(["DCIM/IMG_0001.jpg", "DCIM/IMG_0002.jpg", "DCIM/logo.png", "DCIM/MOV_0003.mp4"])

        let result = try await runImport(planned)

        #expect(result.completion == .success)
        #expect(result.exitStatus == .success)
        #expect(result.report.count(.imported) == 4)
        let items = try await catalog.importItems()
        #expect(items.count == 4)
        #expect(items.allSatisfy { $0.state == .ready && !$0.inFlight })
        #expect(try await catalog.assetCount() == 4)
        #expect(try await catalog.mediaProbeCount() == 4)
        for content in planned {
            let asset = try #require(try await catalog.asset(content.checksum))
            #expect(exists(asset.originalPath))
            let probe = try #require(try await catalog.mediaProbe(content.checksum), "\(content.relativePath)")
            #expect(probe.width != nil && probe.probeJSON.contains("\"container\""))
            let roles = Set(try await catalog.derivedFiles(of: content.checksum).map(\.role))
            let expected: Set<DerivedFileRecord.Role> = content.kind == .video ? [.thumbnail, .preview]
                : [.thumbnail, .preview, .clip]
            #expect(roles == expected, "\(content.relativePath)")
        }
        let video = try #require(try await catalog.mediaProbe(planned[3].checksum))
        #expect(video.durationSeconds.map { abs($0 - 1) < 0.2 } == true)
        #expect(video.codec == "h264")
        // The EXIF picture is 320x240 stored, turned to portrait for display.
        let turned = try #require(try await catalog.mediaProbe(planned[1].checksum))
        #expect(turned.width == 240 && turned.height == 320)
        #expect(turned.cameraMake != nil)
        for file in try await catalog.allDerivedFiles() {
            #expect(exists(file.path), "\(file.path)")
            #expect(FileSystem.size(library.layout.absolute(file.path)) == file.byteCount)
            // The upright 320x240 JPEG is its own preview; the turned one, the PNG and the video get files.
            if file.checksum == planned[0].checksum, file.role == .preview {
                #expect(file.path == (try await catalog.asset(file.checksum))?.originalPath)
                #expect(file.width == 320 && file.height == 240 && file.format == "jpeg")
            } else {
                #expect(file.path.hasPrefix("derived/\(file.checksum.hex.prefix(2))/\(file.checksum.hex)-"))
            }
        }
        #expect(!exists(library.layout.derivedRelativePath(planned[0].checksum, suffix: "preview.jpg")))
        #expect(exists(library.layout.derivedRelativePath(planned[1].checksum, suffix: "preview.jpg")))
        let clip = try #require(try await catalog.derivedFiles(of: planned[0].checksum).first { $0.role == .clip })
        #expect(clip.path.hasSuffix("-clip.mp4"))
        #expect((clip.durationSeconds ?? 0) > 2.5)
        #expect(try temporaryFiles().isEmpty)
        // Each file went through the shard of its final folder: `tmp/ab/` for `originals/ab/` and `derived/ab/`.
        let shards = try FileManager.default.contentsOfDirectory(atPath: library.layout.temporaryDirectory).sorted()
        #expect(shards == Set(planned.map { String($0.checksum.hex.prefix(2)) }).sorted())
        #expect(library.layout.temporaryDirectory(forFinal: "derived/0f/x-thumb.webp") == library.layout.temporaryDirectory + "/0f")
        #expect(library.layout.temporaryDirectory(forFinal: "albums/zz/x.json") == library.layout.temporaryDirectory)
        #expect(library.layout.temporaryDirectory(forFinal: "x.jpg") == library.layout.temporaryDirectory)
    }

    /// A run's memory budget counts an item its transfer holds whole in memory at twice its size. Which items those are
    /// is the destination's to say, whichever command assembled the run: a library folder copies them (none), a store
    /// puts a small file from memory.
    @Test func theTransferCountsWhatTheDestinationHoldsInMemory() throws {
        let store = try TemporaryDirectory(prefix: "cairn-pipeline-store")
        var run = PipelineImport(library: library, catalog: catalog,
                                 configuration: .defaults(cores: 2), sourceID: 1)
        #expect(run.schedulerConfiguration.transfer.holdsItemsUpTo == 0)
        run.destination = LibraryDestination(store: FolderStore(root: store.path), folderRoot: library.layout.root)
        #expect(run.schedulerConfiguration.transfer.holdsItemsUpTo == StoreStages.inMemoryLimit)
        #expect(run.schedulerConfiguration.thumbnail.holdsItemsUpTo == 0)
        #expect(!run.schedulerConfiguration.destinationMakesDerivatives)
    }

    /// An import into a store ends by aborting the uploads a kill left unfinished over a week ago (S3 bills their
    /// parts until then), and leaves a younger one for the next run to resume.
    @Test func anImportIntoAStoreClearsUploadsAbandonedOverAWeekAgo() async throws {
        let settings = try S3Settings.resolve(try TestS3.freshLocation(), environment: try TestS3.environment())
        let store = try S3Store(settings: settings, partSize: 5 << 20)
        let file = try source.write(Data((0 ..< (6 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }), to: "big.mov")
        store.failParts { _ in StoreError(.network, "killed before any part") }
        await #expect(throws: StoreError.self) { _ = try await store.put(try ObjectKey("originals/big.mov"), fromFile: file) }
        var destination = LibraryDestination(store: store, folderRoot: library.layout.root)
        #expect(try await destination.finishImport(runID: "r1", sourceRoot: source.path, catalog: catalog).isEmpty)
        #expect(try await store.unfinishedUploads(prefix: "").count == 1)
        destination.now = { Date().addingTimeInterval(8 * 86_400) }
        #expect(try await destination.finishImport(runID: "r2", sourceRoot: source.path, catalog: catalog)
                    == ["cleared 1 unfinished upload in \(store.description) begun over a week ago and never resumed"])
        #expect(try await store.unfinishedUploads(prefix: "").isEmpty)
        await store.close()
    }

    @Test func clipsOffMakesNoClip() async throws {
        try MediaFixtures.jpeg(at: source.subpath("a.jpg"), width: 200, height: 150)
        let planned = try content(["a.jpg"])
        let result = try await runImport(planned, clips: false)
        #expect(result.completion == .success)
        #expect(try await catalog.derivedFiles(of: planned[0].checksum).map(\.role) == [.preview, .thumbnail])
    }

    @Test("a library removed and made again at the same path in one process gets its tmp/ shards back")
    func aLibraryMadeAgainGetsItsShardsBack() async throws {
        try MediaFixtures.jpeg(at: source.subpath("a.jpg"), width: 200, height: 150)
        let planned = try content(["a.jpg"])
        #expect(try await runImport(planned, clips: false).completion == .success)
        try FileManager.default.removeItem(atPath: libraryFolder.path)
        let again = try Library(root: libraryFolder.path)
        let againCatalog = try again.openCatalog()
        defer { againCatalog.close() }
        // The same bytes, so the same shard this process made for the library removed.
        let result = try await runImport(planned, clips: false, into: (again, againCatalog))
        #expect(result.completion == .success)
        #expect(try await againCatalog.derivedFiles(of: planned[0].checksum).map(\.role) == [.preview, .thumbnail])
    }

    // MARK: Corrupt media

    @Test func corruptFilesFailOnceWithTheirNameAndGoodOnesEndReady() async throws {
        try MediaFixtures.jpeg(at: source.subpath("good one.jpg"), width: 240, height: 160)
        try MediaFixtures.jpeg(at: source.subpath("good two.jpg"), width: 160, height: 240, quality: 8)
        try MediaFixtures.zeroBytes(at: source.subpath("empty.jpg"))
        // Only the headers survive: nothing is left to decode.
        try MediaFixtures.jpeg(at: source.subpath("cut.jpg"), width: 640, height: 480)
        let whole = try Data(contentsOf: URL(fileURLWithPath: source.subpath("cut.jpg")))
        try whole.prefix(700).write(to: URL(fileURLWithPath: source.subpath("cut.jpg")))
        try MediaFixtures.garbage(at: source.subpath("noise.mp4"))
        try Data("just some notes, not a picture\n".utf8).write(to: URL(fileURLWithPath: source.subpath("notes.png")))
        let bad = ["empty.jpg", "cut.jpg", "noise.mp4", "notes.png"]
        let planned = try content(["good one.jpg", "good two.jpg"] + bad)
        let log = EventLog()

        let result = try await runImport(planned, log: log)

        #expect(result.completion == .someFailed)
        #expect(result.exitStatus == .someFilesFailed)
        #expect(log.retries == 0)
        let items = Dictionary(uniqueKeysWithValues: try await catalog.importItems().map { ($0.item.relativePath, $0) })
        for good in ["good one.jpg", "good two.jpg"] {
            #expect(items[good]?.state.name == .ready, "\(good)")
        }
        for name in bad {
            let item = try #require(items[name])
            #expect(item.state.name == .failed, "\(name)")
            #expect(item.state.failure?.retryable == false, "\(name)")
            #expect(item.state.failure?.attempts == 1, "\(name)")
            // The reason says what failed and why, once; the row names the file (a printed line adds it once).
            let failure = try #require(item.state.failure?.reason)
            let reason = failure.description
            #expect(failure.operation != nil && !failure.reason.isEmpty, "\(name): \(reason)")
            #expect(!reason.contains(name) && reason.contains(": "), "\(name): \(reason)")
            #expect(!reason.contains("\n"))
        }
        let failures = result.report.entries.filter { $0.outcome.kind == .failed }.map(\.path).sorted()
        #expect(failures == bad.sorted())
        #expect(try temporaryFiles().isEmpty)
    }

    // MARK: Resume

    @Test func anItemLeftThumbnailingInFlightIsCompletedWithoutTransferringAgain() async throws {
        try MediaFixtures.jpeg(at: source.subpath("resume.jpg"), width: 320, height: 200)
        let planned = try content(["resume.jpg"])
        // The "previous run": placeholder, transfer and probe done, then killed while thumbnailing.
        let sourceID = try await catalog.sourceID(forRoot: source.path)
        let item = try #require(try await catalog.planImportItems(planned, sourceID: sourceID).first).item
        #expect(item.id != .unassigned && item.sourceRoot == source.path && item.originalPath == nil)
        let stages = LibraryStages(layout: library.layout)
        let transferred = try await stages.transfer(item)
        let probed = try await stages.readMetadata(item)
        try await CatalogItemStateStore(catalog: catalog).save([
            ItemMove(ItemRecord(item: item, state: .probing), products: transferred.products),
            ItemMove(ItemRecord(item: item, state: .thumbnailing, inFlight: true), products: probed.products),
        ])
        // Partials the dead worker left behind, in `tmp/` and in a shard; the library's start-of-run sweep removes them.
        let shard = library.layout.temporaryDirectory + "/ab"
        try FileManager.default.createDirectory(atPath: shard, withIntermediateDirectories: true)
        try Data("partial".utf8).write(to: URL(fileURLWithPath: library.layout.temporaryDirectory + "/x.partial.webp"))
        try Data("partial".utf8).write(to: URL(fileURLWithPath: shard + "/y.partial.webp"))
        #expect(library.removeLeftoverTemporaryFiles() == 2)
        // The source is gone: a second transfer would fail.
        try FileManager.default.removeItem(atPath: source.subpath("resume.jpg"))
        let log = EventLog()

        let result = try await runImport([], log: log)

        #expect(result.completion == .success)
        #expect(log.phasesStarted.map(\.1) == [.thumbnail, .synthesis])
        let row = try #require(try await catalog.importItem(planned[0].checksum))
        #expect(row.state.name == .ready)
        #expect(row.inFlight == false)
        #expect(row.crashCount == 0)
        #expect(Set(try await catalog.derivedFiles(of: planned[0].checksum).map(\.role)) == [.thumbnail, .preview, .clip])
        #expect(try await catalog.assetCount() == 1)
        #expect(try temporaryFiles().isEmpty)
    }

    /// The item says where its original is: an archive-only run put it in place under the name it had then; the
    /// next run meets the same bytes under another name and makes the derivatives from that original.
    @Test func aResumedItemFindsItsOriginalWhereAnEarlierRunPutItUnderAnotherName() async throws {
        try MediaFixtures.jpeg(at: source.subpath("first.JPG"), width: 64, height: 48)
        var planned = try content(["first.JPG"])
        let archived = try await runImport(planned, clips: false, derivatives: false)
        #expect(archived.report.count(.archived) == 1)
        let asset = try #require(try await catalog.asset(planned[0].checksum))
        #expect(asset.originalPath.hasSuffix(".jpg"))
        try FileManager.default.moveItem(atPath: source.subpath("first.JPG"), toPath: source.subpath("renamed.jpeg"))
        planned[0].relativePath = "renamed.jpeg"

        let result = try await runImport(planned, clips: false)

        #expect(result.completion == .success)
        let row = try #require(try await catalog.importItem(planned[0].checksum))
        #expect(row.state == .ready && row.item.relativePath == "renamed.jpeg")
        #expect(row.item.originalPath == asset.originalPath)
        #expect(Set(try await catalog.derivedFiles(of: planned[0].checksum).map(\.role)) == [.thumbnail, .preview])
        let renamedOriginal = library.layout.originalRelativePath(planned[0].checksum, fileExtension: "jpeg")
        #expect(!exists(renamedOriginal), "no second copy under the new name")
    }

    /// Libraries made before the one-level layout keep their originals in `originals/ab/cd/`: the catalog says
    /// where, and a later run makes the derivatives from there without copying the file again.
    @Test func anOriginalInTheOlderTwoLevelLayoutIsFoundWhereTheCatalogSays() async throws {
        try MediaFixtures.jpeg(at: source.subpath("old.jpg"), width: 64, height: 48)
        let planned = try content(["old.jpg"])
        _ = try await runImport(planned, clips: false, derivatives: false)
        let hex = planned[0].checksum.hex
        let current = try #require(try await catalog.asset(planned[0].checksum)).originalPath
        #expect(current == "originals/\(hex.prefix(2))/\(hex).jpg")
        let older = "originals/\(hex.prefix(2))/\(hex.dropFirst(2).prefix(2))/\(hex).jpg"
        try FileManager.default.createDirectory(
            atPath: library.layout.absolute("originals/\(hex.prefix(2))/\(hex.dropFirst(2).prefix(2))"),
            withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: library.layout.absolute(current), toPath: library.layout.absolute(older))
        try await catalog.write { db in
            try db.execute(sql: "UPDATE asset SET original_path = ? WHERE sha1 = ?", arguments: [older, hex])
        }

        let result = try await runImport(planned, clips: false)

        #expect(result.completion == .success)
        #expect(try await catalog.importItem(planned[0].checksum)?.state == .ready)
        #expect(Set(try await catalog.derivedFiles(of: planned[0].checksum).map(\.role)) == [.thumbnail, .preview])
        #expect(try await catalog.asset(planned[0].checksum)?.originalPath == older)
        #expect(exists(older) && !exists(current), "no second copy at the new layout's path")
    }

    @Test(arguments: [("DCIM/100APPLE/IMG_0001.JPG", "jpg"), ("a.b/c", ""), ("trip.2019/.hidden", ""),
                      ("heic", ""), ("x/y/z.tar.HEIC", "heic"), ("clip.", "")])
    func anOriginalTakesItsFileNamesExtensionLowercased(path: String, expected: String) throws {
        let item = ImportItem(relativePath: path, sourceRoot: source.path, kind: .photo, byteCount: 1,
                              checksum: try #require(Checksum(hex: String(repeating: "cd", count: 20))))
        #expect(LibraryStages.originalExtension(of: item) == expected, "a dot in a folder's name is not an extension")
    }

    // MARK: Placeholders and cancellation

    @Test func aChecksumHasOneRowAcrossRunsAndAFinishedOneStartsAgain() async throws {
        let sourceID = try await catalog.sourceID(forRoot: source.path)
        let checksum = try #require(Checksum(hex: String(repeating: "ab", count: 20)))
        let planned = ImportItem(relativePath: "a.jpg", sourceRoot: source.path, kind: .photo, byteCount: 10,
                                 checksum: checksum)
        var first = try #require(try await catalog.planImportItems([planned], sourceID: sourceID).first)
        #expect(first.state == .placeholder && first.id != .unassigned)
        first.state = .failed(ItemFailure(phase: .transfer, reason: FailureReason(operation: "open", "gone"), attempts: 3,
                                          retryable: false))
        try await catalog.saveImportItemStates([first], with: StageRows())
        #expect(try await catalog.importItems() == [first], "the state's columns read back as they were written")
        var moved = planned
        moved.relativePath = "later/a.jpg"
        let second = try await catalog.planImportItems([moved, moved], sourceID: sourceID)
        #expect(second.map(\.id) == [first.id, first.id])
        #expect(second.allSatisfy { $0.state == .placeholder && $0.item.relativePath == "later/a.jpg" })
        let rows = try await catalog.importItems()
        #expect(rows.count == 1)
        #expect(rows[0].item.relativePath == "later/a.jpg")
        #expect(rows[0].state == .placeholder)
        #expect(rows[0].item.sourceRoot == source.path)
        #expect(try await catalog.appliedMigrations().contains("v2: import items and media"))
    }

    @Test func aBatchWithSeveralRecordsOfAnItemSavesItsLastOnly() async throws {
        let sourceID = try await catalog.sourceID(forRoot: source.path)
        let items = try (1...2).map { index in
            ImportItem(relativePath: "\(index).jpg", sourceRoot: source.path, kind: .photo, byteCount: 10,
                       checksum: try #require(Checksum(hex: String(repeating: "0\(index)", count: 20))))
        }
        let planned = try await catalog.planImportItems(items, sourceID: sourceID)
        var first = planned[0], second = planned[1]
        var history: [ItemRecord] = []
        for state in [ItemState.queued, .transferring, .probing] {
            first.state = state
            first.inFlight = state == .transferring
            history.append(first)
            if state == .queued {
                second.state = .queued
                history.append(second)
            }
        }
        try await catalog.saveImportItemStates(history, with: StageRows())
        let rows = try await catalog.importItems()
        // One transaction: its last record of each item is what it leaves, whatever came before it in the batch.
        #expect(rows.first { $0.id == first.id }?.state == .probing)
        #expect(rows.first { $0.id == first.id }?.inFlight == false)
        #expect(rows.first { $0.id == second.id }?.state == .queued)
    }

    /// Cancelled before it starts, the run asks for no page: nothing is planned, and the next run takes the content.
    @Test func cancelledBeforeTheRunStartsNothingAndTheNextRunTakesTheContent() async throws {
        try MediaFixtures.jpeg(at: source.subpath("later.jpg"), width: 64, height: 48)
        let planned = try content(["later.jpg"])
        let cancellation = PipelineCancellation()
        cancellation.cancel(deadline: .seconds(5))
        let log = EventLog()

        let result = try await runImport(planned, log: log, cancellation: cancellation)

        #expect(result.completion == .interrupted)
        #expect(result.exitStatus == .interrupted)
        #expect(log.phasesStarted.isEmpty)
        #expect(try await catalog.importItems().isEmpty)
        #expect(try await catalog.assetCount() == 0)

        let resumed = try await runImport(planned)
        #expect(resumed.completion == .success)
        #expect(try await catalog.importItem(planned[0].checksum)?.state.name == .ready)
    }
}
