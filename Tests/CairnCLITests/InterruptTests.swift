import CairnTestSupport
import Foundation
import Testing

/// SIGINT reaches the hashing: a run stops within a read of each file being hashed, says what it left, and exits
/// 130 on its own (no timer's `_exit`).
@Suite struct InterruptTests {
    @Test func sigintWhileHashingTenGigabytesEndsTheRunWithinTwoSeconds() throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        // Sparse: ten gigabytes to read and hash (several seconds on every core), nothing on the disk.
        for index in 0..<10 {
            let path = folder.subpath("src/clip-\(index).mp4")
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            #expect(truncate(path, 1 << 30) == 0)
        }
        let events = folder.subpath("events.ndjson")
        #expect(FileManager.default.createFile(atPath: events, contents: nil))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CairnBinary.path)
        process.arguments = ["import", folder.subpath("src"), "--library", folder.subpath("lib"), "--json"]
        process.standardOutput = FileHandle(forWritingAtPath: events)
        process.standardError = FileHandle.nullDevice
        try process.run()
        func written() -> String { (try? String(contentsOfFile: events, encoding: .utf8)) ?? "" }
        for _ in 0..<3000 where !written().contains("\"phase\":\"hashing\"") && process.isRunning {
            Thread.sleep(forTimeInterval: 0.02)
        }
        let signalled = ContinuousClock.now
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        let took = ContinuousClock.now - signalled
        #expect(process.terminationReason == .exit && process.terminationStatus == 130)
        #expect(took < .seconds(2), "exited \(took) after SIGINT")
        let text = written()
        #expect(text.contains("not hashed; the next run reads them"), "\(text.suffix(2000))")
        #expect(!text.contains("\"event\":\"failed\""), "a file left unread is not a failure")
    }
}
