import CairnTesting
import Foundation
import Testing

@Suite struct ImportCommandTests {
    @Test func importsIntoTheLibraryFromTheEnvironment() throws {
        let source = try TemporaryDirectory(), home = try TemporaryDirectory()
        try source.write(DistinctJPEG.data(byteCount: 5000, seed: 0), to: "a.jpg")
        let result = try CairnBinary.run(["import", source.path], environment: ["CAIRN_LIBRARY": home.subpath("lib")])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("new          1"))
        #expect(FileManager.default.fileExists(atPath: home.subpath("lib/catalog.sqlite")))
    }

    /// Each file's outcome and each file made for it are events of their own (the stream's and the run log's).
    @Test func theJSONNarrationHasEveryFilesOutcomeAndEachDerivedFile() throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        for index in 0..<6 { try MediaFixtures.jpeg(at: folder.subpath("src/IMG_\(index).jpg"), width: 640 + 8 * index, height: 480) }
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: folder.subpath("src/broken.jpg")))
        let result = try CairnBinary.run(["import", folder.subpath("src"), "--library", folder.subpath("lib"), "--json"])
        #expect(result.status == 3, "\(result.standardError)")
        let events = result.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        func files(_ kind: String, role: String? = nil) -> [String] {
            events.filter { $0["event"] as? String == kind && (role == nil || $0["role"] as? String == role) }
                .compactMap { $0["file"] as? String }.sorted()
        }
        let stills = (0..<6).map { "IMG_\($0).jpg" }
        #expect(files("imported") == stills)
        #expect(files("error") == ["broken.jpg"])
        #expect(files("derived", role: "thumbnail") == stills)
        #expect(files("derived", role: "clip") == stills)
        // Each names its item by checksum, the thumbnail the status page serves.
        let checksums = Set(events.filter { $0["event"] as? String == "derived" }.compactMap { $0["sha1"] as? String })
        #expect(checksums.count == 6 && checksums.allSatisfy { $0.count == 40 })
    }

    @Test func missingSourceIsAUsageErrorNamingTheFolder() throws {
        let home = try TemporaryDirectory()
        let result = try CairnBinary.run(["import", home.subpath("nope"), "--library", home.subpath("lib")])
        #expect(result.status == 64)
        #expect(result.standardError.contains("nope"))
        #expect(result.standardError.contains("is the disk mounted"))
        #expect(!FileManager.default.fileExists(atPath: home.subpath("lib")))
    }

    /// `import` reads the library's cairn.toml as `sync` does (`clips = false` here), and its own --clips wins.
    @Test func importReadsTheLibrarysConfigurationAndItsOptionsWin() throws {
        let folder = try TemporaryDirectory()
        for sub in ["src", "lib"] {
            try FileManager.default.createDirectory(atPath: folder.subpath(sub), withIntermediateDirectories: true)
        }
        let picture = try MediaFixtures.jpeg(at: folder.subpath("src/a.jpg"), width: 320, height: 240)
        try "clips = false\n".write(toFile: folder.subpath("lib/cairn.toml"), atomically: true, encoding: .utf8)
        func clips() -> [String] {
            (FileManager.default.enumerator(atPath: folder.subpath("lib/derived"))?.allObjects as? [String] ?? [])
                .filter { $0.hasSuffix("clip.mp4") }
        }
        let first = try CairnBinary.run(["import", folder.subpath("src"), "--library", folder.subpath("lib"), "--plain"])
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        #expect(clips().isEmpty, "cairn.toml says clips = false")
        try FileManager.default.copyItem(atPath: picture, toPath: folder.subpath("src/b.jpg"))
        try Data("x".utf8).append(to: folder.subpath("src/b.jpg"))
        let second = try CairnBinary.run(["import", folder.subpath("src"), "--library", folder.subpath("lib"), "--plain",
                                          "--clips", "on"])
        #expect(second.status == 0, "\(second.standardOutput)\(second.standardError)")
        #expect(clips().count == 1, "--clips on wins for the new file")
    }

    /// `--derivatives off` archives only: originals byte-identical and catalogued, no derivative, each file's report
    /// line says `archived`, `status` counts what waits; a second archive-only run leaves those items alone, and
    /// a run with derivatives on makes them all.
    @Test func archiveOnlyKeepsOriginalsAndALaterRunMakesTheDerivatives() throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        _ = try MediaFixtures.jpeg(at: folder.subpath("src/a.jpg"), width: 320, height: 240)
        _ = try MediaFixtures.jpeg(at: folder.subpath("src/b.jpg"), width: 240, height: 320)
        let library = folder.subpath("lib")
        /// Regular files under a library folder, relative to it.
        func files(_ sub: String) -> [String] {
            let root = folder.subpath("lib/\(sub)")
            return ((try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? []).filter {
                var isFolder: ObjCBool = false
                return FileManager.default.fileExists(atPath: root + "/" + $0, isDirectory: &isFolder) && !isFolder.boolValue
            }
        }
        func contents(_ sub: String) throws -> Set<Data> {
            Set(try files(sub).map { try Data(contentsOf: URL(fileURLWithPath: folder.subpath("lib/\(sub)/\($0)"))) })
        }
        func outcomes(_ report: String) throws -> [String: String] {
            let lines = try String(contentsOfFile: folder.subpath(report), encoding: .utf8).split(separator: "\n")
            var result: [String: String] = [:]
            for line in lines {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
                result[object["path"] as? String ?? "?"] = object["outcome"] as? String
            }
            return result
        }

        let first = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain",
                                         "--derivatives", "off", "--report", folder.subpath("r1.jsonl")])
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        #expect(first.standardOutput.contains("archived     2"), "\(first.standardOutput)")
        let sources = Set(try ["a.jpg", "b.jpg"].map { try Data(contentsOf: URL(fileURLWithPath: folder.subpath("src/\($0)"))) })
        #expect(try contents("originals") == sources, "every original in place, byte-identical")
        #expect(files("derived").isEmpty, "no derivative made: \(files("derived"))")
        #expect(try outcomes("r1.jsonl") == ["a.jpg": "archived", "b.jpg": "archived"])
        let status = try CairnBinary.run(["status", "--library", library])
        #expect(status.standardOutput.contains("2 originals in the library await their previews"), "\(status.standardOutput)")

        _ = try MediaFixtures.jpeg(at: folder.subpath("src/c.jpg"), width: 200, height: 200)
        let second = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain",
                                          "--derivatives", "off", "--report", folder.subpath("r2.jsonl")])
        #expect(second.status == 0, "\(second.standardOutput)\(second.standardError)")
        #expect(try outcomes("r2.jsonl") == ["a.jpg": "unchanged", "b.jpg": "unchanged", "c.jpg": "archived"])
        #expect(files("derived").isEmpty)

        let third = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain",
                                         "--clips", "off", "--report", folder.subpath("r3.jsonl")])
        #expect(third.status == 0, "\(third.standardOutput)\(third.standardError)")
        #expect(try outcomes("r3.jsonl") == ["a.jpg": "imported", "b.jpg": "imported", "c.jpg": "imported"])
        #expect(files("derived").filter { $0.contains("thumb") }.count == 3, "\(files("derived"))")
        #expect(files("derived").filter { $0.contains("preview") }.count == 3, "\(files("derived"))")
        let after = try CairnBinary.run(["status", "--library", library])
        #expect(!after.standardOutput.contains("await"), "\(after.standardOutput)")
    }
}

private extension Data {
    func append(to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: self)
    }
}
