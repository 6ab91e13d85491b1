import CairnNarration
@testable import CairnServe
import CairnTesting
import Foundation
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

    @Test func aClientThatTakesLongerThanTheLimitIsDroppedAndOneWithinItIsNot() async throws {
        let folder = try TemporaryDirectory()
        let store = RunLogStore(directory: folder.path)
        let run = "20261129T010000Z-aaaa"
        try Self.append(Self.line(run, 1, "runStart"), to: store.path(for: run))
        // A limit below zero: however fast the client took the first write, it took longer than that.
        var dropped = RunEventFrames(store: store, resumingAfter: nil, slowClientLimit: .seconds(-1)).makeAsyncIterator()
        #expect(try await dropped.next() != nil, "the opening comment")
        #expect(try await dropped.next() == nil, "then the end of the stream")
        var kept = RunEventFrames(store: store, resumingAfter: nil, slowClientLimit: .seconds(3600)).makeAsyncIterator()
        _ = try await kept.next()
        let frame = try #require(try await kept.next())
        #expect(String(buffer: frame).hasPrefix("id: \(run)/1\n"))
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
