import CairnTesting
import Foundation
import Glibc
import Testing

/// The crash-loop guard with real processes: a file that really crashes the worker (the tests' fault hook, a real
/// SIGSEGV) is found and failed after its solo attempt, visibly everywhere; kills blame nobody.
@Suite(.serialized) struct CrashGuardTests {
    @Test func aFileThatCrashesTheWorkerEveryTimeIsFailedAfterItsSoloAttemptAndEveryOtherFileImports() throws {
        let source = try TemporaryDirectory(prefix: "cairn-poison-source")
        let library = try TemporaryDirectory(prefix: "cairn-poison-library")
        for index in 0..<6 {
            try MediaFixtures.jpeg(at: source.subpath("good\(index).jpg"), width: 320 + 16 * index, height: 240)
        }
        try MediaFixtures.video(at: source.subpath("clip.mp4"), width: 320, height: 180, seconds: 1)
        try MediaFixtures.jpeg(at: source.subpath("poison.jpg"), width: 300, height: 200)
        let report = library.subpath("report.jsonl")
        let arguments = ["import", source.path, "--library", library.subpath("lib"), "--json", "--report", report]
        let poisoned = ["CAIRN_TEST_CRASH_ON": "poison.jpg"]

        var crashes = 0
        var last: CairnBinary.Result?
        for _ in 0..<4 {
            let run = try CairnBinary.run(arguments, environment: poisoned)
            last = run
            if run.status == 3 { break }
            #expect(run.status != 0, "a run with the poison in it ended cleanly: \(run.standardError)")
            crashes += 1
        }
        // Once among the others (the first run), once alone (its solo attempt); then the guard fails it.
        #expect(crashes == 2)
        let final = try #require(last)
        #expect(final.status == 3, "\(final.standardError)")

        // The same failure, with its reason, in the events, the report and the status; counted once in each.
        let reason = "crashed the worker while it ran alone"
        let errors = final.standardOutput.split(separator: "\n").filter { $0.contains("\"event\":\"error\"") }
        #expect(errors.count == 1 && errors.allSatisfy { $0.contains("poison.jpg") && $0.contains(reason) })
        let lines = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n")
        let failedLines = lines.filter { $0.contains("\"outcome\":\"failed\"") }
        #expect(failedLines.count == 1 && failedLines.allSatisfy { $0.contains("poison.jpg") && $0.contains(reason) })
        let status = try CairnBinary.run(["status", "--library", library.subpath("lib")])
        #expect(status.standardOutput.contains("Failed files (1)"), "\(status.standardOutput)")
        #expect(status.standardOutput.contains("poison.jpg: \(reason)"), "\(status.standardOutput)")
        let json = try CairnBinary.run(["status", "--library", library.subpath("lib"), "--json"])
        #expect(json.standardOutput.contains("\"failed\" : 1,"), "\(json.standardOutput)")

        // Every other file is in the library.
        let listing = try CairnBinary.run(["ls", "--library", library.subpath("lib")])
        for name in (0..<6).map({ "good\($0).jpg" }) + ["clip.mp4"] {
            #expect(listing.standardOutput.contains(name), "\(name) missing: \(listing.standardOutput)")
        }

        // It stays failed (and said) without crashing again; --retry-failed takes it up again.
        let again = try CairnBinary.run(arguments, environment: poisoned)
        #expect(again.status == 3, "\(again.standardError)")
        let retried = try CairnBinary.run(arguments + ["--retry-failed"])
        #expect(retried.status == 0, "\(retried.standardError)")
    }

    @Test func twoKillsDuringAnImportLeaveEveryGoodFileImportedAfterTheResume() throws {
        let corpus = try CrashCorpus()
        let library = try TemporaryDirectory(prefix: "cairn-twokills-library")
        let arguments = corpus.importArguments(library: library.path, output: "--json")
        for _ in 0..<2 {
            // Killed with items in flight: once the first item is imported, the others are in the lanes.
            _ = try signalledOnceOutputShows(arguments, signal: SIGKILL, pause: 0.15) {
                $0.contains("\"event\":\"phaseStart\"") && $0.contains("\"importing\"")
            }
        }
        let resumed = try CairnBinary.run(corpus.importArguments(library: library.path))
        #expect(resumed.status == 0, "\(resumed.standardOutput)\(resumed.standardError)")
        #expect(!resumed.standardOutput.contains("failed:"))
        try corpus.verify(library: library.path)
    }
}
