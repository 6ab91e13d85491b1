import CairnTestSupport
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
}

private extension Data {
    func append(to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: self)
    }
}
