import CairnTesting
import Foundation
import Testing

/// One library, two sources that share content: losing a file at one source never trashes what the other
/// still holds (hardening issue, fault 1).
@Suite struct CrossSourceTests {
    @Test func contentAnotherSourceHoldsIsNeverTrashed() throws {
        let (folder, files) = try SyncCommandTests.makeSource(count: 6)
        // Source B holds a byte-identical copy of A's IMG_0.jpg, under another name.
        try folder.write(files["src/IMG_0.jpg"]!, to: "other/shared.jpg")
        func sync(_ source: String, _ extra: [String] = ["--plain"]) throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", folder.subpath(source), "--library", folder.subpath("lib")] + extra)
        }
        #expect(try sync("src").status == 0)
        #expect(try sync("other").status == 0)

        try FileManager.default.removeItem(atPath: folder.subpath("src/IMG_0.jpg"))
        try FileManager.default.removeItem(atPath: folder.subpath("src/IMG_1.jpg"))
        // Confirm the deletions, then ask for them to be applied at once.
        _ = try sync("src", ["--plain", "--apply-deletions"])
        let applied = try sync("src", ["--plain", "--apply-deletions", "--quarantine-days", "0"])
        #expect(applied.status == 0, "\(applied.standardOutput)\(applied.standardError)")

        let trash = folder.subpath("lib/trash")
        let trashed = (FileManager.default.enumerator(atPath: trash)?.allObjects as? [String] ?? [])
            .filter { $0.contains("/originals/") && $0.hasSuffix(".jpg") }
        // IMG_1 is gone from every source: trashed. IMG_0 lives on in the other source: kept.
        #expect(trashed.count == 1)
        func sha1(_ data: Data) throws -> String {
            String(String(decoding: try ExternalTool.run(["sha1sum", "-"], input: data), as: UTF8.self).prefix(40))
        }
        let shared = try sha1(files["src/IMG_0.jpg"]!), gone = try sha1(files["src/IMG_1.jpg"]!)
        #expect(trashed.contains { $0.contains(gone) })
        #expect(!trashed.contains { $0.contains(shared) })
        #expect(FileManager.default.fileExists(
            atPath: folder.subpath("lib/originals/\(shared.prefix(2))/\(shared).jpg")))

        // And the other source's next sync finds its file in the library, not new content to import again.
        let again = try sync("other", ["--json"])
        #expect(again.status == 0)
        #expect(!again.standardOutput.contains("\"event\":\"imported\""))
    }
}

/// A sync stopped by SIGINT during its import trashes nothing (hardening issue, fault 3).
@Suite struct InterruptedSyncTests {
    @Test func anInterruptedSyncTrashesNothingAndTheNextOneDoes() throws {
        let (folder, files) = try SyncCommandTests.makeSource(count: 60)
        let library = folder.subpath("lib")
        func sync(_ extra: [String]) throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", folder.subpath("src"), "--library", library, "--plain"] + extra)
        }
        #expect(try sync([]).status == 0)
        for index in 0..<20 { try FileManager.default.removeItem(atPath: folder.subpath("src/IMG_\(index).jpg")) }
        // Confirmed now, held by the 14-day quarantine.
        #expect(try sync(["--apply-deletions"]).status == 0)
        // New content, so the next sync has an import to interrupt.
        let base = files["src/IMG_0.jpg"]!
        for index in 0..<40 { try folder.write(base + Data("new \(index)".utf8), to: "src/NEW_\(index).jpg") }

        // One item at a time (sync reads its lanes from cairn.toml), so the import is surely under way.
        try #"lanes = "transfer=1,metadata=1,thumbnail=1,synthesis=1""#.write(
            toFile: library + "/cairn.toml", atomically: true, encoding: .utf8)
        let stopped = try interruptedAfterFirstImport(["sync", folder.subpath("src"), "--library", library, "--json",
                                                       "--apply-deletions", "--quarantine-days", "0"])
        #expect(stopped.sawImport, "no item was imported")
        #expect(stopped.status == 130)
        let trash = folder.subpath("lib/trash")
        func trashed() -> [String] {
            (FileManager.default.enumerator(atPath: trash)?.allObjects as? [String] ?? [])
                .filter { $0.contains("/originals/") && $0.hasSuffix(".jpg") }
        }
        #expect(trashed().isEmpty, "an interrupted sync trashed \(trashed().count) assets")

        let finished = try sync(["--apply-deletions", "--quarantine-days", "0"])
        #expect(finished.status == 0, "\(finished.standardOutput)\(finished.standardError)")
        #expect(trashed().count == 20)
    }
}

/// Hardening issue, fault 6: checksums are saved when hashing ends, so a run killed while importing does not
/// hash the source again.
@Suite struct HashesSurviveAKillTests {
    @Test func aRunKilledWhileImportingDoesNotHashAgain() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 30)
        let library = folder.subpath("lib")
        let killed = try signalledOnceOutputShows(
            ["import", folder.subpath("src"), "--library", library, "--json",
             "--lanes", "transfer=1,metadata=1,thumbnail=1,synthesis=1"], signal: SIGKILL) { $0.contains("\"imported\"") }
        #expect(killed.sawLine, "no item was imported")

        let resumed = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--json"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        let end = try #require(resumed.standardOutput.split(separator: "\n").last { $0.contains("\"runEnd\"") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(end.utf8)) as? [String: Any])
        let counts = try #require(object["counts"] as? [String: Any])
        #expect(counts["hashed"] as? Int == 0, "\(counts)")
        #expect(counts["toHash"] as? Int == 0, "\(counts)")
    }
}
