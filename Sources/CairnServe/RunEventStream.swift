import CairnCore
import CairnNarration
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Where a client of `/events` stands: the run and the last event (`seq`) it has. Sent as the Server-Sent Events
/// `id:` field, `<run-id>/<seq>`, which a browser hands back as `Last-Event-ID` when it reconnects.
struct RunEventID: Equatable, CustomStringConvertible {
    var runID: String
    var seq: Int

    init(runID: String, seq: Int) { self.runID = runID; self.seq = seq }

    init?(_ text: String) {
        guard let slash = text.lastIndex(of: "/"), let seq = Int(text[text.index(after: slash)...]), seq >= 0 else { return nil }
        let runID = String(text[..<slash])
        // A run id names a file in the library's run folder: nothing that could leave it.
        guard !runID.isEmpty, runID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else { return nil }
        self.init(runID: runID, seq: seq)
    }

    var description: String { "\(runID)/\(seq)" }
}

/// Follows a library's run logs for one client of `/events`: the events of the run it stands in that it has not
/// had yet, whole lines only, then the next run's. The run log is the stream's one source: what `--json` and the
/// log carry, the stream carries, with no second model. A client with no position starts at the newest run's first
/// event, so one that connects mid-run first gets the run so far.
struct RunEventFollower {
    let store: RunLogStore
    /// The last event this client has.
    private(set) var position: RunEventID?
    private var following: FollowedLog?

    private struct FollowedLog {
        var runID: String
        var offset: UInt64 = 0
        /// The start of a line whose end is not written yet.
        var partial = Data()
        var ended = false
    }

    init(store: RunLogStore, resumingAfter position: RunEventID?) {
        self.store = store
        self.position = position
    }

    /// The most of a run log read in one poll.
    static let readLimit = 256 * 1024

    /// The frames of every event written since the last call: `id: <run-id>/<seq>` and `data: <the NDJSON line>`.
    mutating func poll() -> [String] {
        if following == nil {
            if let position, FileManager.default.fileExists(atPath: store.path(for: position.runID)) {
                following = FollowedLog(runID: position.runID)
            } else if let newest = newestRunID() {
                following = FollowedLog(runID: newest)
                position = nil
            } else {
                return []
            }
        }
        var (frames, atEnd) = readNewLines()
        // Frames first; a followed log is left only once it has been read to its end.
        guard atEnd, frames.isEmpty || following?.ended == true else { return frames }
        // The run ended, or a newer one started (the one followed was killed and will never end): go on with the newest.
        if let newest = newestRunID(), let current = following, newest != current.runID {
            following = FollowedLog(runID: newest)
            frames += readNewLines().frames
        }
        return frames
    }

    /// The run folder's modification time when `newest` was read: a log created or pruned changes it.
    private var folderStamp: (seconds: Int, nanoseconds: Int)?
    private var newest: String?

    /// The run whose log was written last (two runs that start in one second have ids in no particular order).
    /// Read again only when the folder changed, so a client waiting between runs costs one `stat` a poll.
    private mutating func newestRunID() -> String? {
        var status = stat()
        guard case .success = SystemCall.result({ stat(store.directory, &status) }) else { return nil }
        let stamp = (Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec))
        if let folderStamp, folderStamp == stamp { return newest }
        folderStamp = stamp
        newest = (try? store.runIDs())?.first
        return newest
    }

    /// The frames of the lines read, and whether the read reached what is written of the log so far.
    private mutating func readNewLines() -> (frames: [String], atEnd: Bool) {
        guard var log = following else { return ([], true) }
        defer { following = log }
        let path = store.path(for: log.runID)
        // A poll that finds nothing new costs one `stat`: every client polls a few times a second.
        var status = stat()
        guard case .success = SystemCall.result({ stat(path, &status) }), UInt64(status.st_size) > log.offset else {
            return ([], true)
        }
        let size = UInt64(status.st_size)
        guard let handle = FileHandle(forReadingAtPath: path) else { return ([], true) }
        defer { try? handle.close() }
        // A bounded read: a client far behind (a long run, a reconnect) catches up a piece at a time.
        let wanted = Int(min(size - log.offset, UInt64(Self.readLimit)))
        guard (try? handle.seek(toOffset: log.offset)) != nil, let data = try? handle.read(upToCount: wanted),
              !data.isEmpty else { return ([], true) }
        log.offset += UInt64(data.count)
        var pending = log.partial + data
        var frames: [String] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            let line = pending[pending.startIndex..<newline]
            pending = pending[pending.index(after: newline)...]
            guard let head = RunLogLineHead(line) else { continue }
            let skipped = position.map { $0.runID == log.runID && head.seq <= $0.seq } ?? false
            if head.endsRun { log.ended = true }
            if skipped { continue }
            let id = RunEventID(runID: log.runID, seq: head.seq)
            position = id
            frames.append("id: \(id)\ndata: " + String(decoding: line, as: UTF8.self) + "\n\n")
        }
        log.partial = Data(pending)
        return (frames, log.offset >= size)
    }
}

/// The body of one `/events` response: the follower's frames as they come, and a comment now and then so proxies
/// and browsers keep a quiet stream open.
///
/// Nothing is buffered for a client: the next frames are read from the run log only when the last ones were taken
/// by the connection, so a slow client lags behind in the log, not in memory; one that stops taking them is closed
/// by the connection's `SlowReaderGuard`.
struct RunEventFrames: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let store: RunLogStore
    let resumingAfter: RunEventID?
    /// How often the run log is looked at for new lines: the run is another process.
    var pollInterval: Duration = .milliseconds(200)
    var keepAliveInterval: Duration = .seconds(15)

    struct AsyncIterator: AsyncIteratorProtocol {
        var follower: RunEventFollower
        let frames: RunEventFrames
        var started = false
        var lastWrite = ContinuousClock.now

        mutating func next() async throws -> ByteBuffer? {
            let clock = ContinuousClock()
            if !started {
                started = true
                // Tells the browser how soon to reconnect, and sends the headers at once.
                return hand(": cairn run events\nretry: 2000\n\n", clock: clock)
            }
            while !Task.isCancelled {
                let ready = follower.poll()
                if !ready.isEmpty { return hand(ready.joined(), clock: clock) }
                if clock.now - lastWrite >= frames.keepAliveInterval { return hand(": keep-alive\n\n", clock: clock) }
                try await Task.sleep(for: frames.pollInterval)
            }
            return nil
        }

        private mutating func hand(_ text: String, clock: ContinuousClock) -> ByteBuffer {
            lastWrite = clock.now
            return ByteBuffer(string: text)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(follower: RunEventFollower(store: store, resumingAfter: resumingAfter), frames: self)
    }
}

/// What a frame needs from a run log's line (the line itself is sent as it is), found without decoding the line:
/// every client reads every line, and a run says an event per file and per file made. The log's lines are
/// `NarrationRecord`s as `NarrationJSON` writes them: one object, each key right after `{` or `,`, and a quote inside
/// a string always escaped, so `,"seq":` can only be a key; no nested object has a `seq` or an `event`.
struct RunLogLineHead: Equatable {
    var seq: Int
    var endsRun: Bool

    init(seq: Int, endsRun: Bool) { self.seq = seq; self.endsRun = endsRun }

    init?(_ line: Data) {
        guard let head = line.withUnsafeBytes({ Self.scan($0) }) else { return nil }
        self = head
    }

    private static let seqKey = Array(#""seq":"#.utf8)
    private static let runEnd = Array(#""event":"runEnd""#.utf8)

    private static func scan(_ bytes: UnsafeRawBufferPointer) -> RunLogLineHead? {
        guard bytes.count > 2, bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}"),
              var index = key(seqKey, in: bytes) else { return nil }
        var seq = 0, digits = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9"), digits < 18 {
            seq = seq * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            index += 1
            digits += 1
        }
        guard digits > 0, index < bytes.count, bytes[index] == UInt8(ascii: ",") || bytes[index] == UInt8(ascii: "}") else {
            return nil
        }
        return RunLogLineHead(seq: seq, endsRun: key(runEnd, in: bytes) != nil)
    }

    /// Where the value after `key` starts, the key written right after `{` or `,`.
    private static func key(_ key: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        var start = 1
        while start + key.count <= bytes.count {
            let before = bytes[start - 1]
            if before == UInt8(ascii: "{") || before == UInt8(ascii: ",") {
                var matched = 0
                while matched < key.count, bytes[start + matched] == key[matched] { matched += 1 }
                if matched == key.count { return start + key.count }
            }
            start += 1
        }
        return nil
    }
}
