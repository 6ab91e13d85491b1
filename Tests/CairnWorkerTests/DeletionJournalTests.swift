import CairnCore
import CairnTesting
import Foundation
import Testing

@testable import CairnTrash

@Suite struct DeletionJournalTests {
    let moment = Date(timeIntervalSince1970: 1_800_000_000.25)

    func entry(_ run: String, _ action: JournalEntry.Action, _ label: String?, paths: [String], at time: Date) -> JournalEntry {
        JournalEntry(runID: run, action: action, checksum: label.map(checksum), paths: paths,
                     sourcePath: label.map { "DCIM/\($0).jpg" }, timestamp: time)
    }

    @Test func entriesRoundTripOneJSONLinePerEntry() throws {
        let library = try TemporaryDirectory()
        let journal = DeletionJournal(libraryRoot: library.path)
        let first = entry("r1", .trash, "a", paths: ["originals/a.jpg", "derived/a-thumb.webp"], at: moment)
        let second = entry("r1", .restore, "a", paths: ["originals/a.jpg"], at: moment + 60)
        try journal.append(first)
        try journal.append(second)

        #expect(try journal.entries() == [first, second])
        let text = try String(contentsOfFile: journal.path, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(text.hasSuffix("\n"))
        #expect(lines[0].contains(#""runID":"r1""#))
        #expect(lines[0].contains(#""timestamp":"2027-01-15T08:00:00.250Z""#))
        #expect(lines[0].contains("originals/a.jpg"), "slashes are not escaped")
    }

    @Test func anAbsentJournalReadsEmpty() throws {
        let library = try TemporaryDirectory()
        let journal = DeletionJournal(libraryRoot: library.path)
        #expect(try journal.entries().isEmpty)
        #expect(try journal.lastRunID() == nil)
        #expect(try journal.runs().isEmpty)
    }

    @Test func aLineTornByACrashIsReportedAndTheNextAppendStartsAFreshLine() throws {
        let library = try TemporaryDirectory()
        let journal = DeletionJournal(libraryRoot: library.path)
        let first = entry("r1", .trash, "a", paths: ["originals/a.jpg"], at: moment)
        try journal.append(first)
        let handle = try #require(FileHandle(forWritingAtPath: journal.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"runID":"r1","act"#.utf8))
        try handle.close()

        let third = entry("r2", .trash, "b", paths: ["originals/b.jpg"], at: moment + 1)
        try journal.append(third)
        let contents = try journal.read()
        #expect(contents.entries == [first, third])
        #expect(contents.damagedLines == [2])
    }

    @Test func runsSummariseEachRunInOrder() throws {
        let library = try TemporaryDirectory()
        let journal = DeletionJournal(libraryRoot: library.path)
        try journal.append(entry("r1", .trash, "a", paths: ["o/a", "d/a1", "d/a2"], at: moment))
        try journal.append(entry("r1", .trash, "b", paths: ["o/b"], at: moment + 1))
        try journal.append(entry("r2", .trash, "c", paths: ["o/c"], at: moment + 10))
        try journal.append(entry("r1", .restore, "a", paths: ["o/a"], at: moment + 20))
        try journal.append(entry("r2", .purge, nil, paths: ["o/c"], at: moment + 30))

        let runs = try journal.runs()
        #expect(runs.map(\.runID) == ["r1", "r2"])
        #expect(runs[0].trashedAssets == 2)
        #expect(runs[0].trashedFiles == 4)
        #expect(runs[0].restoredFiles == 1)
        #expect(runs[0].firstTimestamp == moment)
        #expect(runs[0].lastTimestamp == moment + 20)
        #expect(runs[1].purgedFiles == 1)
        #expect(try journal.lastRunID() == "r2")
        #expect(try journal.entries(runID: "r2").map(\.action) == [.trash, .purge])
    }
}
