import CairnTesting
import Foundation
import Glibc
import Testing

/// `cairn import` as a person, a pipe and a machine see it.
@Suite struct NarrationOutputTests {
    func makeSource(files: Int = 12) throws -> TemporaryDirectory {
        let source = try TemporaryDirectory()
        for index in 0..<files {
            try source.write(DistinctJPEG.data(byteCount: 40_000 + index, seed: UInt8(index)), to: "DCIM/IMG_\(index).jpg")
        }
        return source
    }

    @Test func jsonIsOnlyValidLinesWithPhasesInOrderAndSaneProgress() throws {
        let source = try makeSource(), library = try TemporaryDirectory()
        let result = try CairnBinary.run(["import", source.path, "--library", library.path, "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n")
        #expect(lines.count > 10)
        var objects: [[String: Any]] = []
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            objects.append(try #require(object, "not a JSON object: \(line)"))
        }
        #expect(objects.first?["event"] as? String == "runStart")
        #expect(objects.last?["event"] as? String == "runEnd")
        let phases = objects.filter { $0["event"] as? String == "phaseStart" }.compactMap { $0["phase"] as? String }
        #expect(phases == ["preparing", "hashing", "reconciling", "importing", "finalizing"])
        let seqs = objects.compactMap { $0["seq"] as? Int }
        #expect(seqs == Array(1...seqs.count))

        var lastFraction: [String: Double] = [:]
        for object in objects where object["event"] as? String == "progress" {
            let phase = try #require(object["phase"] as? String)
            guard let fraction = (object["progress"] as? [String: Any])?["fraction"] as? Double else { continue }
            #expect(fraction <= 1.0)
            #expect(fraction >= (lastFraction[phase] ?? 0), "progress of \(phase) went backwards")
            lastFraction[phase] = fraction
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let hashedTimes = objects.filter { $0["event"] as? String == "hashed" }
            .compactMap { ($0["time"] as? String).flatMap(formatter.date(from:)) }
        for (earlier, later) in zip(hashedTimes, hashedTimes.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) >= 0.249)
        }
        let end = try #require(objects.last)
        #expect(end["status"] as? String == "success" && end["outcome"] as? String == "success")
        #expect((end["counts"] as? [String: Any])?["new"] as? Int == 12)
    }

    @Test func aPipeGetsPlainLinesWithoutEscapeCodes() throws {
        let source = try makeSource(), library = try TemporaryDirectory()
        let result = try CairnBinary.run(["import", source.path, "--library", library.path])
        #expect(result.status == 0)
        #expect(!result.standardOutput.contains("\u{1B}"))
        #expect(result.standardOutput.contains("hashing"))
        #expect(result.standardOutput.contains("new          12"))
    }

    @Test func aTerminalGetsALiveViewThatEndsWithASummary() throws {
        let source = try makeSource(), library = try TemporaryDirectory()
        let terminal = try PseudoTerminal(columns: 80)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CairnBinary.path)
        process.arguments = ["import", source.path, "--library", library.path]
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let slave = FileHandle(fileDescriptor: terminal.slave, closeOnDealloc: false)
        process.standardOutput = slave
        process.standardError = slave
        try process.run()
        // To the end, not to a marker: on a terminal each summary line is its own write.
        let screen = terminal.readUntilChildCloses()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // In-place redraws: the cursor goes back up or the line is cleared, instead of scrolling line after line.
        #expect(screen.contains("\u{1B}["))
        #expect(screen.contains("\u{1B}[2K") || screen.contains("\u{1B}[K") || screen.contains("\u{1B}[J"))
        #expect(!screen.contains("\u{1B}[3"), "NO_COLOR must turn colours off")
        #expect(screen.withoutEscapes.contains("new          12"))
    }

    @Test func statusAfterASuccessfulRunShowsTheTimeAndTimeline() throws {
        let source = try makeSource(files: 3), library = try TemporaryDirectory()
        _ = try CairnBinary.run(["import", source.path, "--library", library.path])
        let status = try CairnBinary.run(["status", "--library", library.path])
        #expect(status.status == 0)
        #expect(status.standardOutput.contains("Up to date · last synced"))
        for phase in ["Preparing", "Hashing", "Reconciling", "Importing", "Finalizing"] {
            #expect(status.standardOutput.contains(phase))
        }
        let json = try CairnBinary.run(["status", "--library", library.path, "--json"])
        #expect(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) is [String: Any])
    }

    @Test func statusAfterARunWithFailuresShowsTheReason() throws {
        let source = try makeSource(files: 2), library = try TemporaryDirectory()
        _ = try CairnBinary.run(["import", source.path, "--library", library.path])
        // A new file whose content-address folder is blocked by a plain file: its copy must fail, for any user.
        // Content whose address folder the first import did not create (two random files may share a prefix).
        var newFile = "", hex = "", attempt = 0
        repeat {
            newFile = try source.write(Data("brand new content \(attempt)".utf8), to: "DCIM/new.jpg")
            hex = String(String(decoding: try ExternalTool.run(["sha1sum", newFile]), as: UTF8.self).prefix(40))
            attempt += 1
        } while FileManager.default.fileExists(atPath: library.subpath("originals/\(hex.prefix(2))"))
        try library.write(Data("in the way".utf8), to: "originals/\(hex.prefix(2))")
        let second = try CairnBinary.run(["import", source.path, "--library", library.path])
        #expect(second.status == 3)
        #expect(second.standardOutput.contains("failed: DCIM/new.jpg"))
        let status = try CairnBinary.run(["status", "--library", library.path])
        #expect(status.standardOutput.contains("failed"))
        #expect(status.standardOutput.contains("DCIM/new.jpg"))
        #expect(status.standardOutput.contains("Not a directory"))
    }
}
