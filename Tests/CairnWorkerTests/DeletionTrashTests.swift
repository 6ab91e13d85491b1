import CairnCatalog
import CairnCore
import CairnReconcile
import CairnReconcileOracle
import CairnTesting
import Foundation
import Testing

@testable import CairnLibrary
@testable import CairnTrash

/// A readable checksum: the label's bytes, zero-padded to 20.
func checksum(_ label: String) -> Checksum {
    let bytes = Array(label.utf8.prefix(20))
    return Checksum(bytes: bytes + Array(repeating: 0, count: 20 - bytes.count))!
}

func randomBytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var data = Data(capacity: count + 8)
    while data.count < count { withUnsafeBytes(of: generator.next()) { data.append(contentsOf: $0) } }
    return data.prefix(count)
}

/// A library with one asset: an original and its thumbnail.
struct LibraryFixture {
    let library: TemporaryDirectory
    let original = "originals/ab/cd/abcd.jpg"
    let thumbnail = "derived/ab/abcd-thumb.webp"
    let originalBytes = randomBytes(200_000)
    let thumbnailBytes = randomBytes(3_000)
    var mover: TrashMover { TrashMover(libraryRoot: library.path) }
    var item: TrashItem { TrashItem(checksum: checksum("abcd"), libraryPaths: [original, thumbnail], sourcePath: "DCIM/IMG_0001.JPG") }

    init() throws {
        library = try TemporaryDirectory()
        try library.write(originalBytes, to: original)
        try library.write(thumbnailBytes, to: thumbnail)
    }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: library.subpath(relative)) }
    func bytes(_ relative: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: library.subpath(relative))) }
}

let runTime = Date(timeIntervalSince1970: 1_800_000_000)

@Suite struct DeletionTrashTests {
    @Test func trashMovesTheOriginalAndItsDerivedFilesIntoTheRunFolder() throws {
        let fixture = try LibraryFixture()
        let report = try fixture.mover.trash([fixture.item], runID: "run-1", now: runTime)

        #expect(report.trashed == [fixture.item])
        #expect(report.failures.isEmpty)
        #expect(!fixture.exists(fixture.original))
        #expect(!fixture.exists(fixture.thumbnail))
        #expect(try fixture.bytes("trash/run-1/" + fixture.original) == fixture.originalBytes)
        #expect(try fixture.bytes("trash/run-1/" + fixture.thumbnail) == fixture.thumbnailBytes)
        let entries = try fixture.mover.journal.entries()
        #expect(entries == [JournalEntry(runID: "run-1", action: .trash, checksum: checksum("abcd"),
                                         paths: [fixture.original, fixture.thumbnail],
                                         sourcePath: "DCIM/IMG_0001.JPG", timestamp: runTime)])
    }

    @Test func nothingMovesWhenTheJournalCannotBeWritten() throws {
        let fixture = try LibraryFixture()
        try FileManager.default.createDirectory(atPath: fixture.library.subpath("journal.jsonl"),
                                                withIntermediateDirectories: false)
        #expect(throws: SystemCallError.self) { try fixture.mover.trash([fixture.item], runID: "run-1", now: runTime) }
        #expect(try fixture.bytes(fixture.original) == fixture.originalBytes)
        #expect(!fixture.exists("trash/run-1"))
    }

    @Test func restoreBringsEveryFileBackByteIdenticalAndRecordsIt() throws {
        let fixture = try LibraryFixture()
        _ = try fixture.mover.trash([fixture.item], runID: "run-1", now: runTime)
        let report = try fixture.mover.restore(runID: "run-1", now: runTime + 60)

        #expect(report.restored == [fixture.item])
        #expect(report.failures.isEmpty)
        #expect(try fixture.bytes(fixture.original) == fixture.originalBytes)
        #expect(try fixture.bytes(fixture.thumbnail) == fixture.thumbnailBytes)
        #expect(!fixture.exists("trash/run-1/" + fixture.original))
        #expect(try fixture.mover.journal.entries().map(\.action) == [.trash, .restore])

        let again = try fixture.mover.restore(runID: "run-1", now: runTime + 120)
        #expect(again == RestoreReport(), "a second restore has nothing left to do and nothing to complain about")
    }

    @Test func restoreSelectsByChecksumOrByFileName() throws {
        let library = try TemporaryDirectory()
        let mover = TrashMover(libraryRoot: library.path)
        var items: [TrashItem] = []
        for (label, name) in [("one", "IMG_0001.JPG"), ("two", "IMG_0002.HEIC"), ("three", "VID_0003.MOV")] {
            try library.write(Data(label.utf8), to: "originals/\(label).bin")
            items.append(TrashItem(checksum: checksum(label), libraryPaths: ["originals/\(label).bin"],
                                   sourcePath: "camera/\(name)"))
        }
        _ = try mover.trash(items, runID: "run-1", now: runTime)

        let byChecksum = try mover.restore(runID: "run-1", checksums: [checksum("two")], now: runTime)
        #expect(byChecksum.restored.map(\.checksum) == [checksum("two")])
        let byName = try mover.restore(runID: "run-1", fileNameMatching: "^VID_.*\\.MOV$", now: runTime)
        #expect(byName.restored.map(\.checksum) == [checksum("three")])
        #expect(FileManager.default.fileExists(atPath: library.subpath("trash/run-1/originals/one.bin")))
        #expect(throws: DeletionError.self) { try mover.restore(runID: "run-1", fileNameMatching: "([", now: runTime) }
    }

    @Test func restoreNeverOverwritesADifferentFile() throws {
        let fixture = try LibraryFixture()
        _ = try fixture.mover.trash([fixture.item], runID: "run-1", now: runTime)
        try fixture.library.write(Data("someone else".utf8), to: fixture.original)
        try fixture.library.write(fixture.thumbnailBytes, to: fixture.thumbnail)

        let report = try fixture.mover.restore(runID: "run-1", now: runTime)
        #expect(report.restored.isEmpty)
        #expect(report.alreadyPresent == [fixture.thumbnail])
        #expect(report.failures.map(\.path) == [fixture.original])
        #expect(report.failures[0].reason.description.contains("refusing to overwrite"))
        #expect(try fixture.bytes(fixture.original) == Data("someone else".utf8))
        #expect(try fixture.bytes("trash/run-1/" + fixture.original) == fixture.originalBytes)
    }

    @Test func unsafePathsAreRefusedAndNothingOfThatAssetMoves() throws {
        let fixture = try LibraryFixture()
        let outside = try TemporaryDirectory()
        try outside.write(Data("precious".utf8), to: "precious.txt")
        try FileManager.default.createSymbolicLink(atPath: fixture.library.subpath("originals/link.jpg"),
                                                   withDestinationPath: outside.subpath("precious.txt"))
        for bad in ["../x.jpg", "/etc/hostname", "trash/run-0/a.jpg", "originals/./a.jpg", "journal.jsonl",
                    "originals/link.jpg"] {
            let item = TrashItem(checksum: checksum("abcd"), libraryPaths: [fixture.original, bad])
            let report = try fixture.mover.trash([item], runID: "run-1", now: runTime)
            #expect(report.trashed.isEmpty, "\(bad)")
            #expect(report.failures.map(\.path) == [bad])
        }
        #expect(fixture.exists(fixture.original))
        #expect(try fixture.mover.journal.entries().isEmpty)
        #expect(try Data(contentsOf: outside.url.appendingPathComponent("precious.txt")) == Data("precious".utf8))
    }

    @Test func aSymlinkedFolderOnTheWayIsRefused() throws {
        let library = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try outside.write(Data("x".utf8), to: "ab/x.jpg")
        try FileManager.default.createDirectory(atPath: library.subpath("originals"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: library.subpath("originals/ab"),
                                                   withDestinationPath: outside.subpath("ab"))
        let report = try TrashMover(libraryRoot: library.path).trash(
            [TrashItem(checksum: checksum("x"), libraryPaths: ["originals/ab/x.jpg"])], runID: "run-1", now: runTime)
        #expect(report.trashed.isEmpty)
        #expect(report.failures.first?.reason.description.contains("symlink") == true)
        #expect(FileManager.default.fileExists(atPath: outside.subpath("ab/x.jpg")))
    }

    @Test func aMissingDerivedFileIsReportedWhileTheOriginalStillMoves() throws {
        let fixture = try LibraryFixture()
        try FileManager.default.removeItem(atPath: fixture.library.subpath(fixture.thumbnail))
        let report = try fixture.mover.trash([fixture.item], runID: "run-1", now: runTime)
        #expect(report.trashed.map(\.libraryPaths) == [[fixture.original]])
        #expect(report.failures.map(\.path) == [fixture.thumbnail])
        #expect(try fixture.mover.journal.entries().map(\.paths) == [[fixture.original]])
    }

    @Test func reTrashingAfterAnInterruptionFinishesTheJobWithoutDuplicates() throws {
        let fixture = try LibraryFixture()
        // The previous attempt journaled and moved the original, then stopped.
        try fixture.mover.journal.append(JournalEntry(runID: "run-1", action: .trash, checksum: checksum("abcd"),
                                                      paths: [fixture.original, fixture.thumbnail], timestamp: runTime))
        try FileManager.default.createDirectory(atPath: fixture.library.subpath("trash/run-1/originals/ab/cd"),
                                                withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: fixture.library.subpath(fixture.original),
                                         toPath: fixture.library.subpath("trash/run-1/" + fixture.original))

        let report = try fixture.mover.trash([fixture.item], runID: "run-1", now: runTime)
        #expect(report.failures.isEmpty)
        #expect(report.trashed.map(\.libraryPaths) == [[fixture.thumbnail]])
        #expect(fixture.exists("trash/run-1/" + fixture.thumbnail))
        #expect(try fixture.mover.restore(runID: "run-1", now: runTime).restoredFileCount == 2)
        #expect(try fixture.bytes(fixture.original) == fixture.originalBytes)
    }

    @Test(arguments: ["", "..", "a/b", "../escape", "run id"])
    func unsafeRunIDsAreRefused(runID: String) throws {
        let fixture = try LibraryFixture()
        #expect(throws: DeletionError.self) { try fixture.mover.trash([fixture.item], runID: runID, now: runTime) }
        #expect(throws: DeletionError.self) { try fixture.mover.restore(runID: runID, now: runTime) }
        #expect(fixture.exists(fixture.original))
    }
}

/// Sidecars follow their media into the trash and back.
@Suite struct SidecarTrashTests {
    @Test func anAssetsSidecarsGoToTheTrashWithItAndComeBack() async throws {
        let folder = try TemporaryDirectory()
        let library = try Library(root: folder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        let asset = try #require(Checksum(hex: String(repeating: "c3", count: 20)))
        let sidecar = try #require(Checksum(hex: String(repeating: "d4", count: 20)))
        let original = "originals/c3/c3/\(asset.hex).jpg", stored = "sidecars/d4/d4/\(sidecar.hex).xmp"
        try folder.write(Data("photo".utf8), to: original)
        try folder.write(Data("<xmp/>".utf8), to: stored)
        try await catalog.insertAssets([AssetRecord(
            checksum: asset, kind: .photo, size: 5, originalExtension: "jpg", firstSourcePath: "IMG.jpg",
            originalPath: original, importedAt: Date(), runID: nil)])
        try await catalog.linkSidecar(SidecarRecord(checksum: sidecar, asset: asset, kind: "xmp", path: stored,
                                                      sourcePath: "IMG.xmp", linkedAt: Date()))

        let summary = try await DeletionRun(library: library, catalog: catalog).trash(
            [DeleteCandidate(checksum: asset, basis: .approved)], runID: "run-9", now: runTime)
        #expect(summary.failures.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.subpath(stored)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.subpath("trash/run-9/" + stored))) == Data("<xmp/>".utf8))

        _ = try await TrashMaintenance(library: library, catalog: catalog).restore(runID: "run-9", now: runTime + 60)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.subpath(stored))) == Data("<xmp/>".utf8))
        #expect(try await catalog.sidecars(of: asset).map(\.path) == [stored])
    }
}
