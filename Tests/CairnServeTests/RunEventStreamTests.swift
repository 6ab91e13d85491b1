import CairnCore
import CairnLibrary
import CairnNarration
import CairnStatus
@testable import CairnServe
import CairnTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import Testing

/// `/events` below the HTTP layer: which lines of which run log a client gets, from where it resumes, when it moves
/// on to the next run, and when it is dropped; what the access guard takes for this machine and for a cookie.
@Suite struct RunEventStreamTests {
    static func line(_ runID: String, _ seq: Int, _ event: String = "note") -> String {
        #"{"event":"\#(event)","message":"m\#(seq)","runId":"\#(runID)","seq":\#(seq),"time":"2026-11-29T00:00:00.000Z"}"# + "\n"
    }

    static func append(_ text: String, to path: String) throws {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }

    /// The `seq` of each frame, with the run its id names.
    static func ids(_ frames: [String]) -> [String] {
        frames.compactMap { frame in frame.split(separator: "\n").first { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) } }
    }

    @Test func aClientGetsTheRunSoFarThenWhatIsAppendedAndNeverAHalfWrittenLine() throws {
        let folder = try TemporaryDirectory()
        let store = RunLogStore(directory: folder.path)
        let run = "20261129T010000Z-aaaa"
        let whole = Self.line(run, 4)
        try Self.append(Self.line(run, 1, "runStart") + Self.line(run, 2) + Self.line(run, 3) + whole.prefix(20), to: store.path(for: run))
        var follower = RunEventFollower(store: store, resumingAfter: nil)
        let first = follower.poll()
        #expect(Self.ids(first) == ["\(run)/1", "\(run)/2", "\(run)/3"])
        #expect(first[1] == "id: \(run)/2\ndata: " + Self.line(run, 2).dropLast() + "\n\n", "the log's line, as it is")
        #expect(follower.poll().isEmpty, "nothing new, and the half line waits")
        try Self.append(String(whole.dropFirst(20)) + Self.line(run, 5, "runEnd"), to: store.path(for: run))
        #expect(Self.ids(follower.poll()) == ["\(run)/4", "\(run)/5"])
        #expect(follower.poll().isEmpty)
    }

    @Test func lastEventIDResumesRightAfterItsEvent() throws {
        let folder = try TemporaryDirectory()
        let store = RunLogStore(directory: folder.path)
        let run = "20261129T010000Z-aaaa"
        try Self.append((1...6).map { Self.line(run, $0) }.joined(), to: store.path(for: run))
        var follower = RunEventFollower(store: store, resumingAfter: RunEventID("\(run)/4"))
        #expect(Self.ids(follower.poll()) == ["\(run)/5", "\(run)/6"])
    }

    @Test func theNextRunIsFollowedEvenWhenItsIDSortsBeforeTheEndedOne() throws {
        let folder = try TemporaryDirectory()
        let store = RunLogStore(directory: folder.path)
        // Two runs that started in one second: their ids' random tails sort the later one first.
        let ended = "20261129T010000Z-ffff", next = "20261129T010000Z-0000"
        try Self.append(Self.line(ended, 1, "runStart") + Self.line(ended, 2, "runEnd"), to: store.path(for: ended))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-60)], ofItemAtPath: store.path(for: ended))
        var follower = RunEventFollower(store: store, resumingAfter: nil)
        #expect(Self.ids(follower.poll()) == ["\(ended)/1", "\(ended)/2"])
        try Self.append(Self.line(next, 1, "runStart"), to: store.path(for: next))
        #expect(Self.ids(follower.poll()) == ["\(next)/1"])
    }

    @Test func aRunKilledBeforeItsEndIsLeftForTheNewerOne() throws {
        let folder = try TemporaryDirectory()
        let store = RunLogStore(directory: folder.path)
        let killed = "20261129T010000Z-aaaa", next = "20261129T020000Z-bbbb"
        try Self.append(Self.line(killed, 1, "runStart") + Self.line(killed, 2), to: store.path(for: killed))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-60)], ofItemAtPath: store.path(for: killed))
        var follower = RunEventFollower(store: store, resumingAfter: RunEventID("\(killed)/1"))
        #expect(Self.ids(follower.poll()) == ["\(killed)/2"])
        try Self.append(Self.line(next, 1, "runStart"), to: store.path(for: next))
        #expect(Self.ids(follower.poll()) == ["\(next)/1"])
    }

    @Test func anIDThatNamesNoRunOrAPathStartsAtTheNewestRun() throws {
        #expect(RunEventID("../../etc/passwd/3") == nil)
        #expect(RunEventID("20261129T010000Z-aaaa/x") == nil)
        #expect(RunEventID("/3") == nil)
        let folder = try TemporaryDirectory()
        let store = RunLogStore(directory: folder.path)
        let run = "20261129T010000Z-aaaa"
        try Self.append(Self.line(run, 1, "runStart") + Self.line(run, 2), to: store.path(for: run))
        var follower = RunEventFollower(store: store, resumingAfter: RunEventID("20200101T000000Z-gone/9"))
        #expect(Self.ids(follower.poll()) == ["\(run)/1", "\(run)/2"], "a pruned run: the newest from its start")
    }

    /// The stream reads `seq` and the run's end from each line without decoding it: it must agree with decoding,
    /// whatever a file name or a reason holds.
    @Test func aLinesHeadIsReadAsDecodingReadsItWhateverItsStringsHold() throws {
        let hostile = #"x","seq":99,"event":"runEnd","y":"\"seq\":7 {,"seq":5}"#
        let events: [NarrationEvent] = [
            .runStart(command: "import"),
            .imported(file: hostile, sha1: String(repeating: "a", count: 40)),
            .error(hostile, phase: .importing, file: "/src/" + hostile + ".jpg", category: .corrupt),
            .note("runEnd", phase: nil),
            .runEnd(NarrationEvent.RunEnd(outcome: .someFailed, message: hostile, counts: RunCounts())),
        ]
        for (index, event) in events.enumerated() {
            let record = NarrationRecord(event, seq: 1000 + index, time: Date(), runID: "20261129T010000Z-aaaa")
            let line = Data(NarrationJSON.line(for: record, encoder: NarrationJSON.encoder()).utf8.dropLast())
            let decoded = try NarrationJSON.decoder().decode(NarrationRecord.self, from: line)
            #expect(RunLogLineHead(line) == RunLogLineHead(seq: decoded.seq, endsRun: decoded.kind == .runEnd), "\(String(decoding: line, as: UTF8.self))")
        }
        for garbage in ["", "{}", "not json", #"{"seq":}"#, #"{"seq":12"#, #"["seq",3]"#] {
            #expect(RunLogLineHead(Data(garbage.utf8)) == nil, "\(garbage)")
        }
    }

    @Test func aLogLongerThanOneReadComesInPiecesAndIsReadToItsEndBeforeTheNextRun() throws {
        let folder = try TemporaryDirectory()
        let store = RunLogStore(directory: folder.path)
        let (first, second) = ("20261129T010000Z-aaaa", "20261129T020000Z-bbbb")
        let count = RunEventFollower.readLimit / Self.line(first, 1).utf8.count * 3
        try Self.append((1...count).map { Self.line(first, $0, $0 == 1 ? "runStart" : "note") }.joined(), to: store.path(for: first))
        try Self.append(Self.line(second, 1, "runStart"), to: store.path(for: second))
        // Resumed near the start of the older run, which was killed: its rest first, then the newer run.
        var follower = RunEventFollower(store: store, resumingAfter: RunEventID(runID: first, seq: 2))
        var seen: [String] = [], polls = 0
        while seen.last != "\(second)/1", polls < 100 {
            let frames = follower.poll()
            #expect(frames.joined().utf8.count <= RunEventFollower.readLimit * 2, "one poll reads a bounded piece")
            seen += Self.ids(frames)
            polls += 1
        }
        #expect(polls > 1)
        #expect(seen == (3...count).map { "\(first)/\($0)" } + ["\(second)/1"])
    }

    /// A client that stops reading while a run writes more than the connection's buffers hold is closed by the server
    /// (it reconnects and resumes); one that reads gets every event and is not closed.
    @Test(.timeLimit(.minutes(3))) func aClientThatStopsReadingIsClosedAndOneThatReadsIsNot() async throws {
        let folder = try TemporaryDirectory()
        let layout = LibraryLayout(root: folder.path)
        try FileManager.default.createDirectory(atPath: layout.runLogDirectory, withIntermediateDirectories: true)
        let store = RunLogStore(directory: layout.runLogDirectory)
        let run = "20261129T010000Z-aaaa"
        let padding = String(repeating: "x", count: 1000)
        // Past what the server's fixed send buffer, NIO's high watermark and the client's window hold together.
        let events = 2_500
        try Self.append((1...events).map {
            #"{"event":"note","message":"\#(padding)","runId":"\#(run)","seq":\#($0),"time":"2026-11-29T00:00:00.000Z"}"# + "\n"
        }.joined(), to: store.path(for: run))
        let logBytes = try #require(FileManager.default.attributesOfItem(atPath: store.path(for: run))[.size] as? Int)

        let (listening, port) = AsyncStream.makeStream(of: Int.self)
        let (dropping, drop) = AsyncStream.makeStream(of: Void.self)
        let drops = Locked(0)
        var server = StatusServer(catalog: SQLiteStatusSource(libraryRoot: folder.path),
                                  listen: ListenAddress(host: "127.0.0.1", port: 0), token: nil, quarantineDays: nil)
        server.slowClientLimit = .seconds(1)
        server.onListening = { port.yield($0) }
        server.onClientDropped = { drops.withLock { $0 += 1 }; drop.yield() }
        let serving = Task { [server] in try await server.run(stopsOnSignals: false) }
        defer { serving.cancel() }
        var ports = listening.makeAsyncIterator()
        let bound = try #require(await ports.next())

        let stalled = try RawClient(port: bound, receiveBuffer: 4096)
        try stalled.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(bound)\r\n\r\n")
        // Waited for with a bound, so a server that never drops it fails here rather than hanging the suite.
        let dropped = await withTaskGroup(of: Bool.self) { group in
            group.addTask { var next = dropping.makeAsyncIterator(); return await next.next() != nil }
            group.addTask { try? await Task.sleep(for: .seconds(90)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        try #require(dropped, "the server closed the connection that stopped reading")
        let cutShort = try await BlockingPool.run { try stalled.readToEnd(atMost: logBytes * 2) }
        #expect(cutShort.endOfStream, "the server closed the stalled connection")
        #expect(cutShort.bytes < logBytes, "before the run's events were all sent")

        let reading = try RawClient(port: bound, receiveBuffer: 4096)
        try reading.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(bound)\r\n\r\n")
        let whole = try await BlockingPool.run { try reading.read(framesCounting: events) }
        #expect(whole, "a client that reads gets every event")
        #expect(drops.withLock { $0 } == 1, "and is not closed")
    }

    @Test func theGuardTakesOnlyThisMachinesNamesAndReadsItsCookieAmongOthers() {
        for host in ["127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]:8080", "127.1.2.3"] {
            #expect(AccessGuard<BasicRequestContext>.namesThisMachine(host), "\(host)")
        }
        for host in ["rebound.example.com:8080", "127.0.0.1.evil.example", "127.x.0.1", "", "[::2]:80"] {
            #expect(!AccessGuard<BasicRequestContext>.namesThisMachine(host), "\(host)")
        }
        #expect(!AccessGuard<BasicRequestContext>.namesThisMachine(nil))
        #expect(AccessGuard<BasicRequestContext>.cookie("cairn_token", in: ["a=1; cairn_token=s%3Dx; b=2"]) == "s=x")
        #expect(AccessGuard<BasicRequestContext>.cookie("cairn_token", in: ["xcairn_token=1"]) == nil)
        #expect(AccessGuard<BasicRequestContext>.same("secret", "secret"))
        #expect(!AccessGuard<BasicRequestContext>.same("secreT", "secret") && !AccessGuard<BasicRequestContext>.same("secret1", "secret"))
    }
}

/// A blocking HTTP/1.1 client over one socket, with the receive buffer it is given (set before it connects, so the
/// window it offers stays that small).
private final class RawClient: @unchecked Sendable {
    struct SocketError: Error { var code: Int32 }

    private let socket: Int32

    init(port: Int, receiveBuffer: Int32) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var size = receiveBuffer
        setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(socket); throw SocketError(code: errno) }
    }

    deinit { close(socket) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard Glibc.send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw SocketError(code: errno) }
    }

    /// Reads until the server closes the connection or `limit` bytes came.
    func readToEnd(atMost limit: Int) throws -> (bytes: Int, endOfStream: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536), total = 0
        while total < limit {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count == 0 { return (total, true) }
            // A reset is the server's close too, seen from a socket that still had unread bytes queued at the peer.
            if count < 0 { if errno == ECONNRESET { return (total, true) }; throw SocketError(code: errno) }
            total += count
        }
        return (total, false)
    }

    /// Reads until `times` frames (lines that start with `id: `) came; false when the connection ended first.
    func read(framesCounting times: Int) throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536), seen = 0
        // Where the scan stands within "\nid: ", carried across reads.
        let marker = Array("\nid: ".utf8)
        var matched = 0
        while seen < times {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { return false }
            buffer.withUnsafeBufferPointer { bytes in
                for index in 0..<count {
                    let byte = bytes[index]
                    if byte == marker[matched] {
                        matched += 1
                        if matched == marker.count { seen += 1; matched = 0 }
                    } else {
                        matched = byte == marker[0] ? 1 : 0
                    }
                }
            }
        }
        return true
    }
}
