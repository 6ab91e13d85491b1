import CairnTesting
import Foundation
import Glibc
import Synchronization
import Testing

/// `cairn import` as a real process, killed with SIGKILL at random moments and resumed: nothing lost, nothing
/// doubled, nothing partial or orphaned. `CAIRN_KILL_TRIALS=20` runs more trials than the default 3.
@Suite(.serialized) struct ImportCrashTests {
    static let source = Result { try CrashCorpus() }

    @Test func killedAtRandomMomentsThenResumedLosesAndDoublesNothing() throws {
        let corpus = try Self.source.get()
        // One clean run: checks the checks, and tells how long a run takes.
        let calibration = try TemporaryDirectory(prefix: "cairn-crash-library")
        let started = ContinuousClock.now
        let clean = try CairnBinary.run(corpus.importArguments(library: calibration.path))
        let runTime = ContinuousClock.now - started
        #expect(clean.status == 0, "\(clean.standardError)")
        try corpus.verify(library: calibration.path)

        let trials = Int(ProcessInfo.processInfo.environment["CAIRN_KILL_TRIALS"] ?? "") ?? 3
        var random = SplitMix64(seed: 0xC0FFEE)
        let runSeconds = Double(runTime.components.seconds) + Double(runTime.components.attoseconds) / 1e18
        var killedWhileRunning = 0
        for trial in 1...trials {
            let library = try TemporaryDirectory(prefix: "cairn-crash-library")
            let delay = 0.02 + random.nextUnit() * runSeconds
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CairnBinary.path)
            process.arguments = corpus.importArguments(library: library.path)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(useconds_t(delay * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal { killedWhileRunning += 1 }
            // At the moment of the kill (inside a group commit or not), every row points at a whole file.
            do {
                try corpus.verifyRowsPointAtWholeFiles(library: library.path)
            } catch {
                Issue.record("trial \(trial), right after the kill at \(delay) s: \(error)")
            }

            let resumed = try CairnBinary.run(corpus.importArguments(library: library.path))
            #expect(resumed.status == 0, "trial \(trial) (killed after \(delay) s): \(resumed.standardError)")
            do {
                try corpus.verify(library: library.path)
            } catch {
                Issue.record("trial \(trial) (killed after \(delay) s): \(error)")
            }
        }
        print("kill -9 trials: \(trials), killed mid-run: \(killedWhileRunning), clean run \(runSeconds) s")
        #expect(killedWhileRunning > 0)
    }

    @Test func sigintExits130AndTheNextRunCompletes() throws {
        let corpus = try Self.source.get()
        let library = try TemporaryDirectory(prefix: "cairn-sigint-library")
        // One item at a time, so the run is surely still importing when the signal comes.
        let stopped = try interruptedAfterFirstImport(corpus.importArguments(library: library.path, output: "--json")
            + ["--lanes", "transfer=1,metadata=1,thumbnail=1,synthesis=1"])
        #expect(stopped.sawImport, "no item was imported")
        #expect(stopped.reason == .exit)
        #expect(stopped.status == 130)

        let resumed = try CairnBinary.run(corpus.importArguments(library: library.path))
        #expect(resumed.status == 0, "\(resumed.standardError)")
        try corpus.verify(library: library.path)
    }

    @Test func corruptFilesFailWithReasonsExit3AndTheReportListsEveryFile() throws {
        let source = try TemporaryDirectory(prefix: "cairn-corrupt-source")
        let library = try TemporaryDirectory(prefix: "cairn-corrupt-library")
        for index in 0..<3 {
            try MediaFixtures.jpeg(at: source.subpath("good\(index).jpg"), width: 160 + 16 * index, height: 120)
        }
        try MediaFixtures.video(at: source.subpath("good.mp4"), width: 160, height: 90, seconds: 1)
        // A JPEG cut short still decodes (its top part): it may import; the others cannot.
        try MediaFixtures.truncatedJPEG(at: source.subpath("truncated.jpg"))
        try MediaFixtures.garbage(at: source.subpath("garbage.jpg"))
        try MediaFixtures.zeroBytes(at: source.subpath("empty.jpg"))
        try MediaFixtures.truncatedVideo(at: source.subpath("truncated.mp4"))
        try FileManager.default.copyItem(atPath: source.subpath("good0.jpg"), toPath: source.subpath("copy-of-good0.jpg"))
        let reportPath = library.subpath("report.ndjson")

        let result = try CairnBinary.run(["import", source.path, "--library", library.subpath("lib"), "--plain",
                                          "--report", reportPath])

        #expect(result.status == 3, "\(result.standardError)")
        let bad = ["garbage.jpg", "empty.jpg", "truncated.mp4"]
        for bad in bad {
            let line = result.standardOutput.split(separator: "\n").first { $0.contains("failed: \(bad):") }
            #expect(line.map { $0.count > "  failed: \(bad): ".count } == true, "\(bad) is not listed with a reason")
        }
        let lines = try String(contentsOfFile: reportPath, encoding: .utf8).split(separator: "\n")
        let entries = try lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        var outcomes: [String: String] = [:]
        for entry in entries { outcomes[entry["path"] as? String ?? ""] = entry["outcome"] as? String }
        #expect(outcomes.count == 9 && entries.count == 9, "\(outcomes)")
        for bad in bad { #expect(outcomes[bad] == "failed") }
        for good in ["good1.jpg", "good2.jpg", "good.mp4"] { #expect(outcomes[good] == "imported") }
        // The first path holding some content imports it; the other is a duplicate.
        #expect(outcomes["copy-of-good0.jpg"] == "imported" && outcomes["good0.jpg"] == "duplicate")
        #expect(entries.allSatisfy { $0["outcome"] as? String != "failed" || ($0["reason"] as? String)?.isEmpty == false })
    }
}

/// 12 stills of distinct content and 2 clips, made once per test process.
final class CrashCorpus: Sendable {
    let folder: TemporaryDirectory
    /// SHA1 of every source file.
    let checksums: Set<String>
    let stills = 12

    init() throws {
        folder = try TemporaryDirectory(prefix: "cairn-crash-source")
        try FileManager.default.createDirectory(atPath: folder.subpath("DCIM"), withIntermediateDirectories: true)
        for index in 0..<stills {
            try MediaFixtures.jpeg(at: folder.subpath("DCIM/IMG_\(1000 + index).jpg"), width: 480 + 16 * index,
                                   height: 360)
        }
        try MediaFixtures.video(at: folder.subpath("DCIM/MOV_1.mp4"), width: 320, height: 180, seconds: 1)
        try MediaFixtures.video(at: folder.subpath("DCIM/MOV_2.mp4"), width: 256, height: 144, seconds: 1)
        let dcim = folder.subpath("DCIM")
        let files = try FileManager.default.contentsOfDirectory(atPath: dcim).map { dcim + "/" + $0 }
        checksums = Set(try Checksums.sha1(files).values)
    }

    func importArguments(library: String, output: String = "--plain") -> [String] {
        ["import", folder.path, "--library", library + "/lib", output]
    }

    struct Violation: Error, CustomStringConvertible {
        var description: String
    }

    /// Every source checksum is one ready asset whose original holds exactly those bytes; every catalogued
    /// file exists whole; no file under originals/ or derived/ lacks its row; tmp/ is empty.
    func query(library: String, _ sql: String) throws -> [[String]] {
        let database = library + "/lib/catalog.sqlite"
        let text = String(decoding: try ExternalTool.run(["sqlite3", "-separator", "|", database, sql]), as: UTF8.self)
        return text.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Every asset row's original holds its checksum and every derived row's file has its size: what the group
    /// commit promises at any moment, a kill included. Returns the originals (path -> checksum) and derived rows.
    @discardableResult
    func verifyRowsPointAtWholeFiles(library: String) throws -> (originals: [String: String], derived: [[String]]) {
        let root = library + "/lib"
        guard FileManager.default.fileExists(atPath: root + "/catalog.sqlite") else { return ([:], []) }
        let assets = try query(library: library, "SELECT sha1, original_path FROM asset")
        let assetChecksums = assets.map { $0[0] }
        guard assetChecksums.count == Set(assetChecksums).count else {
            throw Violation(description: "duplicate assets: \(assetChecksums)")
        }
        let originals = Dictionary(uniqueKeysWithValues: assets.map { ($0[1], $0[0]) })
        let onDisk = try Checksums.sha1(originals.keys.map { root + "/" + $0 })
        for (path, checksum) in originals where onDisk[root + "/" + path] != checksum {
            throw Violation(description: "original \(path) does not hold \(checksum)")
        }
        let derived = try query(library: library, "SELECT path, byte_count FROM derived_file")
        for row in derived {
            let size = (try? FileManager.default.attributesOfItem(atPath: root + "/" + row[0])[.size] as? Int) ?? nil
            guard size == Int(row[1]) else {
                throw Violation(description: "derived \(row[0]) is \(size.map(String.init) ?? "missing"), catalog says \(row[1])")
            }
        }
        return (originals, derived)
    }

    func verify(library: String) throws {
        let root = library + "/lib"
        func query(_ sql: String) throws -> [[String]] { try self.query(library: library, sql) }
        func fail(_ message: String) -> Violation { Violation(description: message) }

        let (originals, derived) = try verifyRowsPointAtWholeFiles(library: library)
        guard Set(originals.values) == checksums else {
            throw fail("assets \(originals.count) do not match the \(checksums.count) source checksums")
        }
        let thumbnails = try query("SELECT count(*) FROM derived_file WHERE role = 'thumbnail'")
        let clips = try query("SELECT count(*) FROM derived_file WHERE role = 'clip'")
        guard thumbnails.first?.first == String(checksums.count), clips.first?.first == String(stills) else {
            throw fail("thumbnails \(thumbnails), clips \(clips)")
        }
        let catalogued = Set(originals.keys).union(derived.map { $0[0] })
        for folder in ["originals", "derived"] {
            let enumerator = FileManager.default.enumerator(atPath: root + "/" + folder)
            while let relative = enumerator?.nextObject() as? String {
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: root + "/\(folder)/\(relative)", isDirectory: &isDirectory)
                if !isDirectory.boolValue && !catalogued.contains("\(folder)/\(relative)") {
                    throw fail("orphan \(folder)/\(relative)")
                }
            }
        }
        // Files left in `tmp/` or its shards (the shard folders themselves stay).
        let leftovers = ((try? FileManager.default.subpathsOfDirectory(atPath: root + "/tmp")) ?? []).filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/tmp/" + path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
        guard leftovers.isEmpty else { throw fail("tmp/ holds \(leftovers)") }
        let items = try query("SELECT state, count(*) FROM import_item GROUP BY state")
        guard items.count == 1, items[0] == ["ready", String(checksums.count)] else { throw fail("import items \(items)") }
    }
}

enum Checksums {
    /// Path -> SHA1 hex, by `sha1sum`.
    static func sha1(_ paths: [String]) throws -> [String: String] {
        guard !paths.isEmpty else { return [:] }
        let text = String(decoding: try ExternalTool.run(["sha1sum"] + paths), as: UTF8.self)
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            result[String(parts[1].drop { $0 == " " || $0 == "*" })] = String(parts[0])
        }
        return result
    }
}

/// Runs cairn with `arguments` (NDJSON on stdout), sends `signal` once a line of its output matches (after
/// `pause` seconds more; at `timeout` if none does), and waits for it to end.
func signalledOnceOutputShows(_ arguments: [String], signal: Int32, timeout: Double = 60, pause: Double = 0,
                              environment: [String: String] = [:],
                              matching: @escaping @Sendable (String) -> Bool) throws
    -> (sawLine: Bool, status: Int32, reason: Process.TerminationReason)
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CairnBinary.path)
    process.arguments = arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
    }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let watcher = LineWatcher(output.fileHandleForReading, matches: matching)
    let saw = watcher.waitForMatch(timeout: timeout)
    if saw && pause > 0 { usleep(useconds_t(pause * 1_000_000)) }
    kill(process.processIdentifier, signal)
    process.waitUntilExit()
    return (saw, process.terminationStatus, process.terminationReason)
}

/// Runs cairn with `arguments` (NDJSON on stdout), sends SIGINT once an item is imported, and waits for it.
func interruptedAfterFirstImport(_ arguments: [String], timeout: Double = 60) throws
    -> (sawImport: Bool, status: Int32, reason: Process.TerminationReason)
{
    let stopped = try signalledOnceOutputShows(arguments, signal: SIGINT, timeout: timeout) { $0.contains("\"imported\"") }
    return (stopped.sawLine, stopped.status, stopped.reason)
}

/// Reads a child's output on a thread and signals when a line matches.
final class LineWatcher: Sendable {
    private let matched = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle, matches: @escaping @Sendable (String) -> Bool) {
        let matched = self.matched
        Thread.detachNewThread {
            var buffer = ""
            var signalled = false
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                buffer += String(decoding: data, as: UTF8.self)
                while let newline = buffer.firstIndex(of: "\n") {
                    let line = String(buffer[..<newline])
                    buffer.removeSubrange(...newline)
                    if !signalled && matches(line) {
                        signalled = true
                        matched.signal()
                    }
                }
            }
        }
    }

    func waitForMatch(timeout: Double) -> Bool { matched.wait(timeout: .now() + timeout) == .success }
}
