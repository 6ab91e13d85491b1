#if canImport(Glibc)
import CairnLibrary
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CairnCore
import Foundation

/// The library's append-only record of every trash, restore and purge: `<library>/journal.jsonl`.
///
/// Each entry is written and fsynced (and, when the file is new, its directory too) before the
/// action it describes is carried out, so after a crash the journal names every file that may have moved.
public struct DeletionJournal: Sendable {
    public let libraryRoot: String
    public var path: String { libraryRoot + "/" + LibraryPaths.journalFile }

    public init(libraryRoot: String) { self.libraryRoot = libraryRoot }

    /// Appends `entry` as one JSON line; durable on return.
    public func append(_ entry: JournalEntry) throws {
        var line = try Timestamp.jsonEncoder(milliseconds: true).encode(entry)
        line.append(UInt8(ascii: "\n"))

        var created = true
        var opened = SystemCall.result { open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
        if case .failure(.fileExists) = opened {
            created = false
            opened = SystemCall.result { open(path, O_RDWR | O_APPEND | O_CLOEXEC) }
        }
        let descriptor = try opened.get("open", path)
        defer { close(descriptor) }

        // A crash mid-append can leave a last line without its newline: start a fresh line after it.
        if !created {
            var info = stat()
            try SystemCall.result { fstat(descriptor, &info) }.get("fstat", path)
            if info.st_size > 0 {
                var last: UInt8 = 0
                let read = try SystemCall.result { pread(descriptor, &last, 1, off_t(info.st_size - 1)) }.get("pread", path)
                // Zero bytes at an offset below the size just read: the file was cut meanwhile.
                guard read == 1 else { throw SystemCallError("pread", path: path, code: .ioError) }
                if last != UInt8(ascii: "\n") { line.insert(UInt8(ascii: "\n"), at: 0) }
            }
        }
        try line.withUnsafeBytes { try writeFully(descriptor, $0, path: path) }
        try SystemCall.result { fsync(descriptor) }.get("fsync", path)
        if created { try FileSystem.syncDirectory(libraryRoot) }
    }

    /// Every entry in file order; an absent journal reads as empty.
    public func read() throws -> JournalContents {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch CocoaError.fileReadNoSuchFile {
            return JournalContents(entries: [], damagedLines: [])
        }
        let decoder = Timestamp.jsonDecoder()
        var entries: [JournalEntry] = []
        var damaged: [Int] = []
        for (index, line) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            if line.isEmpty { continue }
            if let entry = try? decoder.decode(JournalEntry.self, from: Data(line)) {
                entries.append(entry)
            } else {
                damaged.append(index + 1)
            }
        }
        return JournalContents(entries: entries, damagedLines: damaged)
    }

    public func entries() throws -> [JournalEntry] { try read().entries }

    /// `cairn journal show --run-id ID`.
    public func entries(runID: String) throws -> [JournalEntry] { try entries().filter { $0.runID == runID } }

    /// `cairn journal show --last`: the run of the newest entry.
    public func lastRunID() throws -> String? { try entries().last?.runID }

    /// `cairn journal list`: one summary per run, in the order runs first appear.
    public func runs() throws -> [JournalRunSummary] {
        var order: [String] = []
        var byRun: [String: JournalRunSummary] = [:]
        for entry in try entries() {
            var summary = byRun[entry.runID] ?? {
                order.append(entry.runID)
                return JournalRunSummary(runID: entry.runID, firstTimestamp: entry.timestamp, lastTimestamp: entry.timestamp)
            }()
            summary.firstTimestamp = min(summary.firstTimestamp, entry.timestamp)
            summary.lastTimestamp = max(summary.lastTimestamp, entry.timestamp)
            switch entry.action {
            case .trash:
                summary.trashedAssets += 1
                summary.trashedFiles += entry.paths.count
            case .restore:
                summary.restoredAssets += 1
                summary.restoredFiles += entry.paths.count
            case .purge:
                summary.purgedFiles += entry.paths.count
            }
            byRun[entry.runID] = summary
        }
        return order.map { byRun[$0]! }
    }
}
