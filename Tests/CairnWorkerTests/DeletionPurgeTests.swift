import CairnCore
import CairnTesting
import Foundation
import Testing

@testable import CairnTrash

@Suite struct DeletionPurgeTests {
    let day: TimeInterval = 86_400

    @Test func purgeDeletesOnlyRunsOldEnoughAndJournalsFirst() throws {
        let library = try TemporaryDirectory()
        let mover = TrashMover(libraryRoot: library.path)
        try library.write(Data("old".utf8), to: "originals/old.jpg")
        try library.write(Data("new".utf8), to: "originals/new.jpg")
        try library.write(Data("kept".utf8), to: "originals/kept.jpg")
        _ = try mover.trash([TrashItem(checksum: checksum("old"), libraryPaths: ["originals/old.jpg"])],
                        runID: "run-old", now: runTime)
        _ = try mover.trash([TrashItem(checksum: checksum("new"), libraryPaths: ["originals/new.jpg"])],
                        runID: "run-new", now: runTime + 10 * day)

        let report = try mover.purge(olderThan: 14 * day, now: runTime + 15 * day)
        #expect(report.purgedRuns == ["run-old"])
        #expect(report.purgedFileCount == 1)
        #expect(report.keptRuns == ["run-new"])
        #expect(!FileManager.default.fileExists(atPath: library.subpath("trash/run-old")))
        #expect(FileManager.default.fileExists(atPath: library.subpath("trash/run-new/originals/new.jpg")))
        #expect(FileManager.default.fileExists(atPath: library.subpath("originals/kept.jpg")))
        let purge = try #require(try mover.journal.entries().last)
        #expect(purge.action == .purge)
        #expect(purge.runID == "run-old")
        #expect(purge.paths == ["originals/old.jpg"])

        #expect(try mover.purge(olderThan: 0, now: runTime + 10 * day).purgedRuns == ["run-new"],
                "older than 0 days purges what was trashed just now")
    }

    @Test func purgeNeverFollowsASymlinkOutOfTheTrash() throws {
        let library = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try outside.write(Data("precious".utf8), to: "dir/precious.txt")
        let mover = TrashMover(libraryRoot: library.path)
        try library.write(Data("a".utf8), to: "originals/a.jpg")
        _ = try mover.trash([TrashItem(checksum: checksum("a"), libraryPaths: ["originals/a.jpg"])], runID: "run-1", now: runTime)
        try FileManager.default.createSymbolicLink(atPath: library.subpath("trash/run-1/originals/escape"),
                                                   withDestinationPath: outside.subpath("dir"))

        let report = try mover.purge(olderThan: 0, now: runTime)
        #expect(report.purgedRuns == ["run-1"])
        #expect(report.purgedFileCount == 2, "the file and the link itself")
        #expect(FileManager.default.fileExists(atPath: outside.subpath("dir/precious.txt")))
    }

    @Test func aTrashThatIsASymlinkIsRefused() throws {
        let library = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        try outside.write(Data("precious".utf8), to: "run-1/precious.txt")
        try FileManager.default.createSymbolicLink(atPath: library.subpath("trash"), withDestinationPath: outside.path)
        let mover = TrashMover(libraryRoot: library.path)
        try mover.journal.append(JournalEntry(runID: "run-1", action: .trash, checksum: checksum("a"),
                                              paths: ["precious.txt"], timestamp: runTime))
        #expect(throws: DeletionError.self) { try mover.purge(olderThan: 0, now: runTime + day) }
        #expect(FileManager.default.fileExists(atPath: outside.subpath("run-1/precious.txt")))
    }

    @Test func foldersTheJournalDoesNotKnowAreLeftAlone() throws {
        let library = try TemporaryDirectory()
        try library.write(Data("mine".utf8), to: "trash/hand-made/notes.txt")
        try library.write(Data("loose".utf8), to: "trash/loose-file")
        let report = try TrashMover(libraryRoot: library.path).purge(olderThan: 0, now: runTime)
        #expect(report.purgedRuns.isEmpty)
        #expect(report.skipped.count == 2)
        #expect(FileManager.default.fileExists(atPath: library.subpath("trash/hand-made/notes.txt")))
        #expect(FileManager.default.fileExists(atPath: library.subpath("trash/loose-file")))
    }

    @Test func restoreAfterPurgeSaysWhy() throws {
        let library = try TemporaryDirectory()
        let mover = TrashMover(libraryRoot: library.path)
        try library.write(Data("a".utf8), to: "originals/a.jpg")
        _ = try mover.trash([TrashItem(checksum: checksum("a"), libraryPaths: ["originals/a.jpg"])], runID: "run-1", now: runTime)
        _ = try mover.purge(olderThan: 0, now: runTime)
        let report = try mover.restore(runID: "run-1", now: runTime)
        #expect(report.restored.isEmpty)
        #expect(report.failures.first?.reason.description.contains("purged?") == true)
    }
}
