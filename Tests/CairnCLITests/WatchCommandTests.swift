import CairnTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket of the test's own where `cairn watch` sends what it would send systemd.
final class NotifySocket: @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    private let lock = NSLock()
    private var received: [String] = []
    private var closed = false

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard descriptor >= 0, bound == 0 else { throw ServiceProcess.Failure(description: "cannot bind \(path)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        DispatchQueue(label: "notify-socket").async { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !lock.withLock({ closed }) {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    let message = String(decoding: buffer[0..<count], as: UTF8.self)
                    lock.withLock { received.append(message) }
                }
            }
            close(descriptor)
        }
    }

    deinit { lock.withLock { closed = true } }

    var messages: [String] { lock.withLock { received } }
}

@Suite(.serialized) struct WatchCommandTests {
    /// Waits until `condition` holds (a generous deadline for real processes, not a timing assertion).
    func eventually(_ what: Comment, timeout: TimeInterval = 90, _ condition: () throws -> Bool) rethrows {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition(), Date() < deadline { usleep(50_000) }
        #expect(try condition(), what)
    }

    func assets(_ folder: TemporaryDirectory) throws -> Int {
        try CairnBinary.run(["ls", "--library", folder.subpath("lib")]).standardOutput.split(separator: "\n").count
    }

    @Test func filesThatArriveAreImportedInFewRunsAndSIGTERMLosesNothing() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 2)
        let notify = try NotifySocket(path: folder.subpath("notify.sock"))
        let watch = try ServiceProcess(CairnBinary.path, [
            "watch", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet", "--debounce", "1", "--max-delay", "60",
            "--listen", "127.0.0.1:0",
        ], environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"], logPath: folder.subpath("watch.log"))
        defer { watch.stop() }
        try watch.waitForOutput(matching: "run 1 \\(startup\\) ended: success")
        #expect(try assets(folder) == 2)
        let base = "http://127.0.0.1:" + (try watch.waitForOutput(matching: "serving on http://127\\.0\\.0\\.1:([0-9]+)/"))
        let served = try HTTPProbe.get(base + "/metrics").body
        #expect(served.contains("cairn_last_run_outcome{library=\"lib\",source=\"src\",outcome=\"success\"} 1"), "\(served)")
        // The same server streams the runs (`/events`): the startup run from its log, then the next one as it happens.
        let stream = try ServiceProcess("curl", ["-s", "-N", base + "/events"], logPath: folder.subpath("events.sse"))
        defer { stream.send(SIGKILL); stream.stop() }
        try stream.waitForOutput(matching: "\"event\":\"runEnd\"")

        // 1,000 files arriving over ten seconds.
        for index in 0..<1000 {
            try folder.write(try DistinctJPEG.data(byteCount: 2500, seed: UInt8(index % 251)) + Data("w\(index)".utf8),
                             to: "src/arrivals/\(index / 100)/A\(index).jpg")
            usleep(10_000)
        }
        try eventually("every arrival imported") { try assets(folder) == 1002 }
        eventually("the run that imported them says so") { watch.output.contains("(changes) ended") }
        let runs = watch.output.components(separatedBy: "(changes) ended").count - 1
        #expect((1...2).contains(runs), "1,000 files over 10 s make at most 2 runs, not \(runs):\n\(watch.output)")
        eventually("the stream carried the runs that followed, to their ends") {
            stream.output.components(separatedBy: "\"event\":\"runEnd\"").count - 1 >= 1 + runs
        }
        stream.send(SIGKILL)

        // SIGTERM while a run works: it stops between items, exits cleanly, and the next sync finds everything.
        for index in 0..<400 {
            try folder.write(try DistinctJPEG.data(byteCount: 2500, seed: UInt8(index % 251)) + Data("t\(index)".utf8),
                             to: "src/late/T\(index).jpg")
        }
        eventually("a run starts", timeout: 30) { notify.messages.contains { $0.hasPrefix("STATUS=syncing:") && $0.contains("importing") } }
        watch.send(SIGTERM)
        let status = try watch.waitForExit()
        #expect(status == 0 || status == 130, "\(watch.output)")
        let after = try CairnBinary.run(["sync", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet"])
        #expect(after.status == 0, "\(after.standardError)")
        #expect(try assets(folder) == 1402, "nothing lost")

        let messages = notify.messages
        #expect(messages.contains { $0.hasPrefix("READY=1") })
        #expect(messages.contains("WATCHDOG=1"))
        #expect(messages.contains { $0.hasPrefix("STATUS=syncing:") })
        #expect(messages.last == "STOPPING=1", "\(messages.suffix(3))")
    }
}
