import CairnTesting
import Foundation
import Testing

/// SIGINT reaches the walk and the hashing: a run stops within a folder or a read, says what it left, and exits 130
/// on its own (no timer's `_exit`).
@Suite struct InterruptTests {
    /// What `cairn import` of `folder/src` did when sent SIGINT as its NDJSON first named `phase`: how it ended, how
    /// long after the signal, and what it wrote.
    struct Interrupted {
        var process: Process
        var took: Duration
        var events: String
    }

    func interruptImport(in folder: TemporaryDirectory, once phase: String) throws -> Interrupted {
        let events = folder.subpath("events.ndjson")
        #expect(FileManager.default.createFile(atPath: events, contents: nil))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CairnBinary.path)
        process.arguments = ["import", folder.subpath("src"), "--library", folder.subpath("lib"), "--json"]
        process.standardOutput = FileHandle(forWritingAtPath: events)
        process.standardError = FileHandle.nullDevice
        try process.run()
        func written() -> String { (try? String(contentsOfFile: events, encoding: .utf8)) ?? "" }
        for _ in 0..<6000 where !written().contains("\"phase\":\"\(phase)\"") && process.isRunning {
            Thread.sleep(forTimeInterval: 0.005)
        }
        let signalled = ContinuousClock.now
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        return Interrupted(process: process, took: ContinuousClock.now - signalled, events: written())
    }

    @Test func sigintWhileHashingTenGigabytesEndsTheRunWithinTwoSeconds() throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        // Sparse: ten gigabytes to read and hash (several seconds on every core), nothing on the disk.
        for index in 0..<10 {
            let path = folder.subpath("src/clip-\(index).mp4")
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            #expect(truncate(path, 1 << 30) == 0)
        }
        let run = try interruptImport(in: folder, once: "hashing")
        #expect(run.process.terminationReason == .exit && run.process.terminationStatus == 130)
        #expect(run.took < .seconds(2), "exited \(run.took) after SIGINT")
        #expect(run.events.contains("not hashed; the next run reads them"), "\(run.events.suffix(2000))")
        #expect(!run.events.contains("\"event\":\"failed\""), "a file left unread is not a failure")
    }

    @Test func sigintDuringAHundredThousandFileWalkEndsTheRunWithinTwoSeconds() throws {
        let folder = try TemporaryDirectory()
        for part in 0..<100 {
            let directory = folder.subpath("src/part-\(part)")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for index in 0..<1000 {
                let fd = open(directory + "/IMG_\(index).jpg", O_WRONLY | O_CREAT | O_EXCL, 0o644)
                #expect(fd >= 0)
                close(fd)
            }
        }
        let run = try interruptImport(in: folder, once: "preparing")
        #expect(run.process.terminationReason == .exit && run.process.terminationStatus == 130)
        #expect(run.took < .seconds(2), "exited \(run.took) after SIGINT")
        #expect(run.events.contains("interrupted during the walk"), "\(run.events.suffix(2000))")
        #expect(!run.events.contains("\"phase\":\"hashing\""), "the run went on past its walk")
    }
}
