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
}
