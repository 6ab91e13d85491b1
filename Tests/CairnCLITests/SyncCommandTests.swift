import CairnTesting
import Foundation
import Testing

/// `cairn sync` and `cairn dry-run` as cron runs them: real processes, real folders, a real catalog.
@Suite struct SyncCommandTests {
    /// A source of `count` distinct small JPEGs: one made by ffmpeg, the rest with different trailing bytes
    /// (decoders stop at the end-of-image marker, so each is a valid, distinct photo).
    static func makeSource(count: Int) throws -> (TemporaryDirectory, [String: Data]) {
        let folder = try TemporaryDirectory()
        let base = folder.subpath("base.jpg")
        try ExternalTool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=64x48", "-frames:v", "1", base])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: base))
        try FileManager.default.removeItem(atPath: base)
        var files: [String: Data] = [:]
        for index in 0..<count {
            let name = "src/IMG_\(index).jpg"
            files[name] = bytes + Data("variant \(index)".utf8)
            try folder.write(files[name]!, to: name)
        }
        return (folder, files)
    }

    func sync(_ folder: TemporaryDirectory, _ extra: [String] = []) throws -> CairnBinary.Result {
        try CairnBinary.run(["sync", folder.subpath("src"), "--library", folder.subpath("lib"), "--plain"] + extra)
    }

    func trashedFiles(_ folder: TemporaryDirectory) -> [String] {
        let trash = folder.subpath("lib/trash")
        return (FileManager.default.enumerator(atPath: trash)?.allObjects as? [String] ?? [])
            .filter { $0.contains("/originals/") && $0.hasSuffix(".jpg") }
    }

    /// `sync` takes the import's pipeline options: --clips off makes no clip, --report lists every file, and a bad
    /// --lanes is refused before anything runs.
    @Test func syncTakesTheImportsPipelineOptions() throws {
        let (folder, files) = try Self.makeSource(count: 3)
        let report = folder.subpath("report.ndjson")
        let result = try sync(folder, ["--clips", "off", "--report", report, "--lanes", "thumbnail=1"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let lines = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == files.count)
        let clips = (FileManager.default.enumerator(atPath: folder.subpath("lib/derived"))?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix("clip.mp4") }
        #expect(clips.isEmpty)
        #expect(FileManager.default.fileExists(atPath: folder.subpath("lib/derived")), "thumbnails are still made")
        let bad = try sync(folder, ["--lanes", "speed.transfer=2"])
        #expect(bad.status == 64 && bad.standardError.contains("--lanes"))
    }

    @Test func aDeletionIsQuarantinedThenTrashedThenRestoredByteIdentical() throws {
        let (folder, files) = try Self.makeSource(count: 4)
        let first = try sync(folder, ["--apply-deletions"])
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        #expect(trashedFiles(folder).isEmpty, "the first run never trashes")

        try FileManager.default.removeItem(atPath: folder.subpath("src/IMG_1.jpg"))
        let held = try sync(folder, ["--apply-deletions"])
        #expect(held.status == 0)
        #expect(held.standardOutput.contains("quarantined until"))
        #expect(held.standardOutput.contains("IMG_1.jpg"))
        #expect(trashedFiles(folder).isEmpty)
        let pending = try CairnBinary.run(["pending", "list", "--library", folder.subpath("lib")])
        #expect(pending.standardOutput.contains("IMG_1.jpg"))

        let trashed = try sync(folder, ["--apply-deletions", "--quarantine-days", "0"])
        #expect(trashed.status == 0, "\(trashed.standardOutput)\(trashed.standardError)")
        #expect(trashedFiles(folder).count == 1)
        let runID = try #require(trashed.standardOutput.split(separator: "\n")
            .first { $0.contains("run ") && $0.contains("started") }
            .flatMap { $0.split(separator: " ").last.map { String($0.dropLast()) } })

        let restore = try CairnBinary.run(["restore", "--run-id", runID, "--library", folder.subpath("lib")])
        #expect(restore.status == 0, "\(restore.standardOutput)\(restore.standardError)")
        #expect(trashedFiles(folder).isEmpty)
        let hex = String(String(decoding: try ExternalTool.run(["sha1sum", "-"], in: nil, input: files["src/IMG_1.jpg"]!), as: UTF8.self).prefix(40))
        let original = folder.subpath("lib/originals/\(hex.prefix(2))/\(hex).jpg")
        #expect(try Data(contentsOf: URL(fileURLWithPath: original)) == files["src/IMG_1.jpg"])
    }

    @Test(arguments: ["renamed away", "emptied", "60 % removed"])
    func anUnhealthySourceTrashesNothingAndSaysWhy(_ damage: String) throws {
        let (folder, _) = try Self.makeSource(count: 5)
        #expect(try sync(folder).status == 0)
        switch damage {
        case "renamed away":
            try FileManager.default.moveItem(atPath: folder.subpath("src"), toPath: folder.subpath("src-old"))
        case "emptied":
            for index in 0..<5 { try FileManager.default.removeItem(atPath: folder.subpath("src/IMG_\(index).jpg")) }
        default:
            for index in 0..<3 { try FileManager.default.removeItem(atPath: folder.subpath("src/IMG_\(index).jpg")) }
        }
        let result = try sync(folder, ["--apply-deletions", "--quarantine-days", "0"])
        #expect(result.status == 4, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("held"))
        #expect(trashedFiles(folder).isEmpty)
    }

    @Test func editRevertEditKeepsTheOriginalAndTheFinalAndQuarantinesTheMiddle() throws {
        let (folder, files) = try Self.makeSource(count: 3)
        let path = folder.subpath("src/IMG_0.jpg")
        let original = files["src/IMG_0.jpg"]!
        #expect(try sync(folder).status == 0)
        try (original + Data("edit one".utf8)).write(to: URL(fileURLWithPath: path))
        #expect(try sync(folder).status == 0)
        try original.write(to: URL(fileURLWithPath: path))
        #expect(try sync(folder).status == 0)
        try (original + Data("edit two".utf8)).write(to: URL(fileURLWithPath: path))
        let last = try sync(folder, ["--apply-deletions", "--quarantine-days", "0"])
        #expect(last.status == 0, "\(last.standardOutput)\(last.standardError)")
        // Only the intermediate edit goes to the trash; the original and the final version stay.
        #expect(trashedFiles(folder).count == 1)
        let plan = try CairnBinary.run(["dry-run", folder.subpath("src"), "--library", folder.subpath("lib"), "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(plan.standardOutput.utf8)) as? [String: Any])
        #expect((json["deleteCandidates"] as? [Any])?.isEmpty == true)
        let status = try CairnBinary.run(["status", "--library", folder.subpath("lib")])
        #expect(status.status == 0)
    }

    @Test func dryRunChangesNothingAndTheSyncDoesItsPlan() throws {
        let (folder, _) = try Self.makeSource(count: 4)
        #expect(try sync(folder).status == 0)
        try FileManager.default.removeItem(atPath: folder.subpath("src/IMG_2.jpg"))
        try folder.write(Data("new photo".utf8) + (try Data(contentsOf: URL(fileURLWithPath: folder.subpath("src/IMG_0.jpg")))), to: "src/new.jpg")
        let before = try ExternalTool.run(["sh", "-c", "cd \(folder.subpath("lib")) && find . -type f | sort | xargs sha1sum"])
        let dry = try CairnBinary.run(["dry-run", folder.subpath("src"), "--library", folder.subpath("lib"), "--json", "--quarantine-days", "0"])
        #expect(dry.status == 0, "\(dry.standardError)")
        let after = try ExternalTool.run(["sh", "-c", "cd \(folder.subpath("lib")) && find . -type f | sort | xargs sha1sum"])
        #expect(before == after, "a dry run must leave the library byte-identical")

        let planned = try #require(try JSONSerialization.jsonObject(with: Data(dry.standardOutput.utf8)) as? [String: Any])
        let real = try sync(folder, ["--apply-deletions", "--quarantine-days", "0"])
        #expect(real.status == 0)
        let toTrash = (planned["deleteCandidates"] as? [[String: Any]])?.compactMap { $0["checksum"] as? String } ?? []
        let toImport = planned["importCandidates"] as? [String] ?? []
        #expect(toTrash.count == 1)
        #expect(toImport.count == 1)
        let trashed = trashedFiles(folder)
        #expect(trashed.count == 1 && trashed.first?.contains(toTrash[0]) == true)
        #expect(real.standardOutput.contains("new          1"))
    }

    @Test func aSecondSyncWhileTheLibraryIsLockedExitsAtOnce() throws {
        let (folder, _) = try Self.makeSource(count: 2)
        #expect(try sync(folder).status == 0)
        // Another process holds the library's lock for a while (as a running `cairn sync` would).
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = ["--exclusive", folder.subpath("lib/.cairn.lock"), "sleep", "20"]
        try holder.run()
        defer { holder.terminate(); holder.waitUntilExit() }
        var locked: CairnBinary.Result?
        for _ in 0..<50 {
            let attempt = try sync(folder)
            if attempt.status == 75 { locked = attempt; break }
            usleep(100_000)  // the holder may not have the lock yet
        }
        let result = try #require(locked)
        #expect(result.standardError.contains("locked"))
    }
}
