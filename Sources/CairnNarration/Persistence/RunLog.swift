import CairnCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a run log could not be written or read, naming the file.
public struct RunLogError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let reason: String
    public var description: String { "\(path): \(reason)" }
}

/// Appends every event of one run to `<directory>/<run-id>.ndjson`, one JSON object per line.
///
/// Each line goes out in one `write(2)` on an `O_APPEND` descriptor, so a crash leaves at worst a torn last line
/// (the reader skips it). The file is fsynced when the run ends. Write errors never stop a run: the first one is
/// kept in `firstError` and the log stops.
public final class RunLogWriter: NarrationHandler {
    public let path: String
    private struct Storage {
        var descriptor: Int32
        var firstError: RunLogError?
        let encoder: JSONEncoder
    }
    private let storage: Locked<Storage>

    public init(path: String) throws {
        let opened = SystemCall.result { open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) }
        guard case .success(let descriptor) = opened else {
            throw RunLogError(path: path, reason: "cannot open run log: \(opened.failureReason)")
        }
        self.path = path
        storage = Locked(Storage(descriptor: descriptor, firstError: nil, encoder: NarrationJSON.encoder()))
    }

    public func handle(_ record: NarrationRecord) {
        storage.withLock { storage in
            guard storage.descriptor >= 0, storage.firstError == nil else { return }
            let line = NarrationJSON.line(for: record, encoder: storage.encoder)
            if let failure = FileDescriptorSink.writeAll(line, to: storage.descriptor) {
                storage.firstError = RunLogError(path: path, reason: "cannot append: \(failure)")
                return
            }
            if record.kind == .runEnd, case .failure(let code) = SystemCall.result({ fsync(storage.descriptor) }) {
                storage.firstError = RunLogError(path: path, reason: "fsync: \(code)")
            }
        }
    }

    /// The first write error, if the log stopped early.
    public var firstError: RunLogError? { storage.withLock { $0.firstError } }

    /// Flushes and closes; later events are dropped. Throws the first error the log met.
    public func close() throws {
        let error: RunLogError? = storage.withLock { storage in
            if storage.descriptor >= 0 {
                if case .failure(let code) = SystemCall.result({ fsync(storage.descriptor) }), storage.firstError == nil {
                    storage.firstError = RunLogError(path: path, reason: "fsync: \(code)")
                }
                Glibc.close(storage.descriptor)
                storage.descriptor = -1
            }
            return storage.firstError
        }
        if let error { throw error }
    }

    deinit {
        storage.withLock { storage in
            if storage.descriptor >= 0 { Glibc.close(storage.descriptor) }
        }
    }
}

/// The run logs of one library: `<library>/runs/` (the caller picks the folder), newest kept, older pruned.
public struct RunLogStore: Sendable {
    public static let fileExtension = "ndjson"
    public let directory: String
    /// How many run logs `prune()` keeps.
    public let keep: Int

    public init(directory: String, keep: Int = 30) {
        self.directory = directory
        self.keep = max(1, keep)
    }

    public func path(for runID: String) -> String { directory + "/" + runID + "." + Self.fileExtension }

    /// Creates the folder if needed, prunes old logs to make room, and opens the log of `runID`.
    public func makeWriter(runID: String) throws -> RunLogWriter {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw RunLogError(path: directory, reason: "cannot create run log folder: \(error.localizedDescription)")
        }
        try prune(keeping: keep - 1)
        return try RunLogWriter(path: path(for: runID))
    }

    /// Run ids with a log, newest first (by modification time, then by id, which sorts by start time).
    public func runIDs() throws -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            if !FileManager.default.fileExists(atPath: directory) { return [] }
            throw RunLogError(path: directory, reason: "cannot list run logs: \(error.localizedDescription)")
        }
        let suffix = "." + Self.fileExtension
        let logs: [(id: String, modified: Date)] = names.filter { $0.hasSuffix(suffix) }.map { name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            let modified = attributes?[.modificationDate] as? Date ?? .distantPast
            return (String(name.dropLast(suffix.count)), modified)
        }
        return logs.sorted { $0.modified != $1.modified ? $0.modified > $1.modified : $0.id > $1.id }.map(\.id)
    }

    /// Deletes all but the newest `count` logs; returns the run ids removed.
    @discardableResult
    public func prune(keeping count: Int? = nil) throws -> [String] {
        let doomed = Array(try runIDs().dropFirst(max(0, count ?? keep)))
        for runID in doomed {
            switch SystemCall.result({ unlink(path(for: runID)) }) {
            case .success, .failure(.noSuchFileOrDirectory): continue
            case .failure(let code):
                throw RunLogError(path: path(for: runID), reason: "cannot remove old run log: \(code)")
            }
        }
        return doomed
    }

    public func events(of runID: String) throws -> [NarrationRecord] {
        try RunLogReader.read(path: path(for: runID))
    }
}

/// Reads a run log back.
public enum RunLogReader {
    /// Every event of the log at `path`. A torn last line (a crash mid-write) is skipped;
    /// any other line that is not an event is an error naming the line.
    public static func read(path: String) throws -> [NarrationRecord] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw RunLogError(path: path, reason: "cannot read run log: \(error.localizedDescription)")
        }
        return try parse(data, path: path)
    }

    public static func parse(_ data: Data, path: String = "<memory>") throws -> [NarrationRecord] {
        let decoder = NarrationJSON.decoder()
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var events: [NarrationRecord] = []
        for (index, line) in lines.enumerated() where !line.isEmpty {
            do {
                events.append(try decoder.decode(NarrationRecord.self, from: Data(line)))
            } catch {
                let isTornTail = index == lines.count - 1
                if isTornTail { break }
                throw RunLogError(path: path, reason: "line \(index + 1) is not a narration event")
            }
        }
        return events
    }
}
