import CairnCatalog
import CairnCore
import CairnLibrary
import CairnReconcile
import CairnReconcileOracle
import CairnTesting
import Foundation
import Testing

@testable import CairnTrash

/// The library's trash over each catalog backend: a deletion moves files and the asset's record together, a
/// restore brings both back and keeps the next sync from trashing again, an interrupted deletion is repaired,
/// a purge forgets.
@Suite struct DeletionRunContractTests {
    static let runTime = Date(timeIntervalSince1970: 1_790_000_000)
    let gone = Checksum(bytes: [UInt8](repeating: 0x60, count: 20))!
    let kept = Checksum(bytes: [UInt8](repeating: 0x6b, count: 20))!

    /// A library with assets whose originals and derived files exist on disk.
    struct Fixture {
        let library: Library
        let catalog: any CatalogUnderTest

        var layout: LibraryLayout { library.layout }

        /// Adds an asset with its original and the given derived suffixes; returns the original's bytes.
        @discardableResult
        func addAsset(_ sum: Checksum, sourcePath: String, derived: [String] = []) async throws -> Data {
            let original = layout.originalRelativePath(sum, fileExtension: "jpg")
            let bytes = Data((0..<10_000).map { _ in UInt8.random(in: 0...255) })
            try write(bytes, original)
            for suffix in derived { try write(Data(repeating: 7, count: 500), layout.derivedRelativePath(sum, suffix: suffix)) }
            try await catalog.insertAssets([AssetRecord(
                checksum: sum, kind: .photo, size: Int64(bytes.count), originalExtension: "jpg", firstSourcePath: sourcePath,
                originalPath: original, importedAt: runTime, runID: "import-1")])
            return bytes
        }

        func write(_ data: Data, _ relative: String) throws {
            let path = layout.absolute(relative)
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: path))
        }

        func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: layout.absolute(relative)) }
        func bytes(_ relative: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: layout.absolute(relative))) }
        var deletion: DeletionRun { DeletionRun(library: library, catalog: catalog) }
        var maintenance: TrashMaintenance { TrashMaintenance(library: library, catalog: catalog) }
    }

    func withFixture(_ backend: CatalogBackend, _ body: (Fixture) async throws -> Void) async throws {
        try await backend.withLibrary { library, catalog in try await body(Fixture(library: library, catalog: catalog)) }
    }

    @Test(arguments: CatalogBackend.allCases)
    func trashesTheOriginalAndEveryDerivedFileAndHidesTheAsset(_ backend: CatalogBackend) async throws {
        try await withFixture(backend) { fixture in
            try await fixture.addAsset(gone, sourcePath: "DCIM/IMG_1.JPG", derived: ["thumb.webp", "preview.jpg", "clip.mp4"])
            try await fixture.addAsset(kept, sourcePath: "DCIM/IMG_2.JPG", derived: ["thumb.webp"])
            let layout = fixture.layout
            let original = layout.originalRelativePath(gone, fileExtension: "jpg")

            let summary = try await fixture.deletion.trash(
                [DeleteCandidate(checksum: gone, basis: .confirmed, confirmedAt: Self.runTime)], runID: "sync-1",
                now: Self.runTime)

            let expectedPaths = [original] + ["clip.mp4", "preview.jpg", "thumb.webp"].map {
                layout.derivedRelativePath(gone, suffix: $0)
            }
            #expect(summary.trashed == [TrashItem(checksum: gone, libraryPaths: expectedPaths, sourcePath: "DCIM/IMG_1.JPG")])
            #expect(summary.failures.isEmpty && summary.movedFileCount == 4)
            for path in expectedPaths {
                #expect(!fixture.exists(path))
                #expect(fixture.exists("trash/sync-1/" + path))
            }
            #expect(fixture.exists(layout.derivedRelativePath(kept, suffix: "thumb.webp")))
            #expect(try await fixture.catalog.assetChecksums() == [kept])
            #expect(try await fixture.catalog.trashedAssets(runID: "sync-1").map(\.asset.checksum) == [gone])
            let journal = try DeletionJournal(libraryRoot: layout.root).entries()
            #expect(journal.map(\.action) == [.trash] && journal.first?.sourcePath == "DCIM/IMG_1.JPG")
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func restoreBringsBytesAndRecordBackAndKeepsTheNextSyncFromTrashingAgain(_ backend: CatalogBackend) async throws {
        try await withFixture(backend) { fixture in
            let bytes = try await fixture.addAsset(gone, sourcePath: "a/IMG_1.JPG", derived: ["thumb.webp"])
            let original = fixture.layout.originalRelativePath(gone, fileExtension: "jpg")
            let sourceID = try await fixture.catalog.sourceID(forRoot: "/src")
            // The sync that found it eligible listed it as waiting; the trash takes it off the list.
            try await fixture.catalog.commitSync(SyncRecord(
                runID: "sync-1", now: Self.runTime,
                changes: StoreDelta(observedAdded: [gone], stampedAt: Self.runTime, advanceSnapshot: true),
                advanceSnapshot: true, sourceHasMarker: true,
                pending: [PendingEntry(checksum: gone, status: .eligible, confirmedAt: Self.runTime, eligibleAt: Self.runTime)]),
                sourceID: sourceID, current: [:])
            #expect(try await fixture.catalog.pending(sourceID: nil).map(\.checksum) == [gone])
            _ = try await fixture.deletion.trash([DeleteCandidate(checksum: gone, basis: .unconfirmed)], runID: "sync-1",
                                                 now: Self.runTime)
            #expect(try await fixture.catalog.pending(sourceID: nil).isEmpty)

            let restored = try await fixture.maintenance.restore(
                runID: "sync-1", fileNameMatching: "IMG_1", now: Self.runTime.addingTimeInterval(60))
            #expect(restored.exitStatus == .success)
            #expect(restored.assetsBack == [gone])
            #expect(try fixture.bytes(original) == bytes)
            #expect(try await fixture.catalog.assetChecksums() == [gone])
            #expect(try await fixture.catalog.trashedAssets(runID: nil).isEmpty)
            #expect(try await fixture.catalog.reconcileState(sourceID: sourceID).exclusions == [gone])
            let actions = try DeletionJournal(libraryRoot: fixture.layout.root).entries().map(\.action)
            #expect(actions == [.trash, .restore])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aCandidateAnInterruptedRunAlreadyMovedIsOnlyMarkedTrashed(_ backend: CatalogBackend) async throws {
        try await withFixture(backend) { fixture in
            try await fixture.addAsset(gone, sourcePath: "x.jpg")
            let original = fixture.layout.originalRelativePath(gone, fileExtension: "jpg")
            // The earlier run journaled and moved the file, then died before the catalog update.
            _ = try TrashMover(libraryRoot: fixture.layout.root).trash(
                [TrashItem(checksum: gone, libraryPaths: [original], sourcePath: "x.jpg")], runID: "sync-1", now: Self.runTime)
            #expect(try await fixture.catalog.assetChecksums() == [gone])

            let summary = try await fixture.deletion.trash(
                [DeleteCandidate(checksum: gone, basis: .unconfirmed)], runID: "sync-2", now: Self.runTime.addingTimeInterval(60))
            #expect(summary.trashed.map(\.checksum) == [gone] && summary.failures.isEmpty)
            #expect(try await fixture.catalog.assetChecksums().isEmpty)
            #expect(try await fixture.catalog.trashedAssets(runID: nil).map(\.trashRunID) == ["sync-1"])
            #expect(!fixture.exists("trash/sync-2"))
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aCandidateUnknownToTheCatalogIsAFailureAndPurgeForgetsTrashedAssets(_ backend: CatalogBackend) async throws {
        try await withFixture(backend) { fixture in
            try await fixture.addAsset(gone, sourcePath: "x.jpg")
            let summary = try await fixture.deletion.trash(
                [DeleteCandidate(checksum: gone, basis: .unconfirmed), DeleteCandidate(checksum: kept, basis: .unconfirmed)],
                runID: "sync-1", now: Self.runTime)
            #expect(summary.trashed.map(\.checksum) == [gone])
            #expect(summary.failures.map(\.checksum) == [kept] && summary.exitStatus == .someFilesFailed)

            let young = try await fixture.maintenance.purge(olderThanDays: 2, now: Self.runTime.addingTimeInterval(86_400))
            #expect(young.purgedRuns.isEmpty && young.keptRuns == ["sync-1"])
            #expect(try await fixture.catalog.trashedAssets(runID: nil).count == 1)
            let old = try await fixture.maintenance.purge(olderThanDays: 2, now: Self.runTime.addingTimeInterval(2 * 86_400))
            #expect(old.purgedRuns == ["sync-1"] && old.purgedFileCount == 1)
            #expect(!fixture.exists("trash/sync-1"))
            #expect(try await fixture.catalog.trashedAssets(runID: nil).isEmpty)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aStillTakesItsMovieAlongUnlessASourceStillHoldsTheMovie(_ backend: CatalogBackend) async throws {
        try await withFixture(backend) { fixture in
            let still = Checksum(bytes: [UInt8](repeating: 0xa1, count: 20))!
            let motion = Checksum(bytes: [UInt8](repeating: 0xb2, count: 20))!
            try await fixture.addAsset(still, sourcePath: "IMG_1.JPG")
            try await fixture.addAsset(motion, sourcePath: "IMG_1.MOV")
            try await fixture.catalog.savePairs([AssetPairRecord(still: still, motion: motion, basis: "content identifier",
                                                                 pairedAt: Self.runTime)])
            let alone = [DeleteCandidate(checksum: still, basis: .confirmed, confirmedAt: Self.runTime)]
            let expanded = try await DeletionRun.withMotionParts(alone, catalog: fixture.catalog)
            #expect(expanded.map(\.checksum) == [still, motion] && expanded.last?.basis == .confirmed)
            // A movie never goes along on its own deletion's behalf: only a still's candidacy carries it.
            let movieAlone = [DeleteCandidate(checksum: motion, basis: .confirmed)]
            #expect(try await DeletionRun.withMotionParts(movieAlone, catalog: fixture.catalog).map(\.checksum) == [motion])

            // The movie is still at a source: trashing it would only import it again.
            let sourceID = try await fixture.catalog.sourceID(forRoot: "/phone")
            try await fixture.catalog.updateSnapshot(sourceID: sourceID, upserting: [SourceFile(
                relativePath: "IMG_1.MOV", fingerprint: FileFingerprint(device: 1, inode: 2, size: 10, modificationTimeNanoseconds: 3),
                checksum: motion, kind: .video)], removing: [])
            #expect(try await DeletionRun.withMotionParts(alone, catalog: fixture.catalog).map(\.checksum) == [still])

            // Trashed with its movie, and restoring the still by name brings both back.
            try await fixture.catalog.updateSnapshot(sourceID: sourceID, upserting: [], removing: ["IMG_1.MOV"])
            let summary = try await fixture.deletion.trash(alone, runID: "sync-5", now: Self.runTime)
            #expect(Set(summary.trashed.map(\.checksum)) == [still, motion])
            let back = try await fixture.maintenance.restore(runID: "sync-5", checksums: [still], now: Self.runTime)
            #expect(Set(back.assetsBack) == [still, motion])
            #expect(try await fixture.catalog.assetChecksums() == [still, motion])
        }
    }
}

extension DeletionRun.Summary {
    var movedFileCount: Int { trashed.reduce(0) { $0 + $1.libraryPaths.count } }
}
