import CairnCatalog
import CairnCore
import CairnReconcile
import CairnTesting
import Foundation
import Testing

@testable import CairnLibrary
@testable import CairnTrash

/// A real library folder with assets whose originals and derived files exist on disk.
struct DeletionRunFixture {
    let folder: TemporaryDirectory
    let library: Library
    let sourceID: Int64

    init() throws {
        folder = try TemporaryDirectory()
        library = try Library(root: folder.subpath("lib"))
        sourceID = try library.catalog.sourceID(forRoot: "/src", now: runTime)
    }

    /// Adds an asset with its original and the given derived suffixes; returns the original's bytes.
    @discardableResult
    func addAsset(_ sum: Checksum, sourcePath: String, derived: [String] = []) throws -> Data {
        let layout = library.layout
        let original = layout.originalRelativePath(sum, fileExtension: "jpg")
        let bytes = randomBytes(10_000)
        try write(bytes, original)
        for suffix in derived { try write(randomBytes(500), layout.derivedRelativePath(sum, suffix: suffix)) }
        try library.catalog.insertAssets([AssetRecord(
            checksum: sum, kind: .photo, size: Int64(bytes.count), originalExtension: "jpg", firstSourcePath: sourcePath,
            originalPath: original, importedAt: runTime, runID: "import-1")])
        return bytes
    }

    func write(_ data: Data, _ relative: String) throws {
        let path = library.layout.absolute(relative)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
    }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: library.layout.absolute(relative)) }
    func bytes(_ relative: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: library.layout.absolute(relative))) }
}

@Suite struct DeletionRunTests {
    let gone = checksum("gone"), kept = checksum("kept")

    @Test func trashesTheOriginalAndEveryDerivedFileAndHidesTheAsset() throws {
        let fixture = try DeletionRunFixture()
        try fixture.addAsset(gone, sourcePath: "DCIM/IMG_1.JPG", derived: ["thumb.webp", "preview.jpg", "clip.mp4"])
        try fixture.addAsset(kept, sourcePath: "DCIM/IMG_2.JPG", derived: ["thumb.webp"])
        let layout = fixture.library.layout
        let original = layout.originalRelativePath(gone, fileExtension: "jpg")

        let summary = try DeletionRun(library: fixture.library).trash(
            [DeleteCandidate(checksum: gone, basis: .confirmed, confirmedAt: runTime)], runID: "sync-1", now: runTime)

        let expectedPaths = [original] + ["clip.mp4", "preview.jpg", "thumb.webp"].map { layout.derivedRelativePath(gone, suffix: $0) }
        #expect(summary.trashed == [TrashItem(checksum: gone, libraryPaths: expectedPaths, sourcePath: "DCIM/IMG_1.JPG")])
        #expect(summary.failures.isEmpty && summary.movedFileCount == 4)
        for path in expectedPaths {
            #expect(!fixture.exists(path))
            #expect(fixture.exists("trash/sync-1/" + path))
        }
        #expect(fixture.exists(layout.derivedRelativePath(kept, suffix: "thumb.webp")))
        #expect(try fixture.library.catalog.assetChecksums() == [kept])
        #expect(try fixture.library.catalog.trashedAssets(runID: "sync-1").map(\.asset.checksum) == [gone])
        let journal = try DeletionJournal(libraryRoot: layout.root).entries()
        #expect(journal.map(\.action) == [.trash] && journal.first?.sourcePath == "DCIM/IMG_1.JPG")
    }

    @Test func restoreBringsBytesAndRecordBackAndKeepsTheNextSyncFromTrashingAgain() throws {
        let fixture = try DeletionRunFixture()
        let bytes = try fixture.addAsset(gone, sourcePath: "a/IMG_1.JPG", derived: ["thumb.webp"])
        let original = fixture.library.layout.originalRelativePath(gone, fileExtension: "jpg")
        let store = ReconcileStore(catalog: fixture.library.catalog)
        try store.apply(StoreDelta(observedAdded: [gone], stampedAt: runTime, advanceSnapshot: true), sourceID: fixture.sourceID)
        _ = try DeletionRun(library: fixture.library).trash([DeleteCandidate(checksum: gone, basis: .unconfirmed)],
                                                           runID: "sync-1", now: runTime)

        let restored = try TrashMaintenance(library: fixture.library).restore(
            runID: "sync-1", fileNameMatching: "IMG_1", now: runTime.addingTimeInterval(60))
        #expect(restored.exitStatus == .success)
        #expect(restored.assetsBack == [gone])
        #expect(try fixture.bytes(original) == bytes)
        #expect(try fixture.library.catalog.assetChecksums() == [gone])
        #expect(try fixture.library.catalog.trashedAssets().isEmpty)
        #expect(try store.loadState(sourceID: fixture.sourceID).exclusions == [gone])
        let actions = try DeletionJournal(libraryRoot: fixture.library.layout.root).entries().map(\.action)
        #expect(actions == [.trash, .restore])
    }

    @Test func aCandidateAnInterruptedRunAlreadyMovedIsOnlyMarkedTrashed() throws {
        let fixture = try DeletionRunFixture()
        try fixture.addAsset(gone, sourcePath: "x.jpg")
        let original = fixture.library.layout.originalRelativePath(gone, fileExtension: "jpg")
        // The earlier run journaled and moved the file, then died before the catalog update.
        _ = try TrashMover(libraryRoot: fixture.library.layout.root).trash(
            [TrashItem(checksum: gone, libraryPaths: [original], sourcePath: "x.jpg")], runID: "sync-1", now: runTime)
        #expect(try fixture.library.catalog.assetChecksums() == [gone])

        let summary = try DeletionRun(library: fixture.library).trash(
            [DeleteCandidate(checksum: gone, basis: .unconfirmed)], runID: "sync-2", now: runTime.addingTimeInterval(60))
        #expect(summary.trashed.map(\.checksum) == [gone] && summary.failures.isEmpty)
        #expect(try fixture.library.catalog.assetChecksums().isEmpty)
        #expect(try fixture.library.catalog.trashedAssets().map(\.trashRunID) == ["sync-1"])
        #expect(!fixture.exists("trash/sync-2"))
    }

    @Test func aCandidateUnknownToTheCatalogIsAFailureAndPurgeForgetsTrashedAssets() throws {
        let fixture = try DeletionRunFixture()
        try fixture.addAsset(gone, sourcePath: "x.jpg")
        let summary = try DeletionRun(library: fixture.library).trash(
            [DeleteCandidate(checksum: gone, basis: .unconfirmed), DeleteCandidate(checksum: kept, basis: .unconfirmed)],
            runID: "sync-1", now: runTime)
        #expect(summary.trashed.map(\.checksum) == [gone])
        #expect(summary.failures.map(\.checksum) == [kept] && summary.exitStatus == .someFilesFailed)

        let maintenance = TrashMaintenance(library: fixture.library)
        let young = try maintenance.purge(olderThanDays: 2, now: runTime.addingTimeInterval(86_400))
        #expect(young.purgedRuns.isEmpty && young.keptRuns == ["sync-1"])
        let old = try maintenance.purge(olderThanDays: 2, now: runTime.addingTimeInterval(2 * 86_400))
        #expect(old.purgedRuns == ["sync-1"] && old.purgedFileCount == 1)
        #expect(!fixture.exists("trash/sync-1"))
        #expect(try fixture.library.catalog.trashedAssets().isEmpty)
    }
}
