import CairnTesting
import Foundation
import Testing

/// Issue 65, item 4: `--tag` and `--session-tag` tag a run's new assets, in the catalog and in Immich.
@Suite struct RunTagTests {
    @Test func aRunsNewAssetsAreTaggedInTheCatalog() throws {
        let folder = try TemporaryDirectory()
        let source = folder.subpath("src"), library = folder.subpath("lib")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        for index in 0..<2 { try MediaFixtures.jpeg(at: source + "/IMG_\(index).jpg", width: 100 + index, height: 80) }
        let first = try CairnBinary.run(["import", source, "--library", library, "--plain", "--clips", "off",
                                         "--tag", "Trip", "--tag", "Family/Kids", "--session-tag"])
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        let shown = try CairnBinary.run(["asset", source + "/IMG_0.jpg", "--library", library])
        let line = try #require(shown.standardOutput.split(separator: "\n").first { $0.hasPrefix("tags       ") })
        let session = try #require(line.split(separator: " ").last.map(String.init))
        #expect(line.hasPrefix("tags       Family/Kids, Trip, cairn/import/"), "\(line)")
        // cairn/import/YYYY-MM-DDTHHMM: no colon.
        #expect(session.count == "cairn/import/2026-11-28T1530".count && !session.contains(":"), "\(session)")
        #expect(first.standardOutput.contains("tagged 2 new assets Trip, Family/Kids, \(session)"), "\(first.standardOutput)")

        // A later run tags what it brings, and only that.
        try MediaFixtures.jpeg(at: source + "/IMG_2.jpg", width: 130, height: 80)
        let second = try CairnBinary.run(["import", source, "--library", library, "--plain", "--clips", "off", "--tag", "Later"])
        #expect(second.status == 0, "\(second.standardOutput)\(second.standardError)")
        func listed(_ tag: String) throws -> [String] {
            let result = try CairnBinary.run(["ls", "--library", library, "--json", "--tag", tag])
            return result.standardOutput.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["firstSourcePath"] as? String
            }.sorted()
        }
        #expect(try listed("trip") == ["IMG_0.jpg", "IMG_1.jpg"])
        #expect(try listed("Later") == ["IMG_2.jpg"])
        #expect(try listed("Nothing").isEmpty)
        let bad = try CairnBinary.run(["import", source, "--library", library, "--tag", "/Trip"])
        #expect(bad.status == 64 && bad.standardError.contains("--tag '/Trip'"), "\(bad.standardError)")
    }

    @Test func aRunsNewAssetsAreTaggedInImmich() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        try fixture.writeDistinctJPEGs(3, prefix: "T")
        let result = try fixture.sync(["--tag", "Trip/2026", "--session-tag"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let assets = try await fixture.double.state().assets
        #expect(assets.count == 3)
        for asset in assets {
            #expect(asset.tags.count == 2 && asset.tags.contains("Trip/2026"), "\(asset.tags)")
            #expect(asset.tags.contains { $0.hasPrefix("cairn/import/") && !$0.contains(":") }, "\(asset.tags)")
        }
    }

    /// A key that may not make tags is refused at connect, by name, before anything is sent.
    @Test func aKeyWithoutTagPermissionsIsRefusedBeforeAnythingIsSent() async throws {
        let fixture = try ImmichDestinationTests.Fixture(
            keyPermissions: [ImmichDestinationTests.key: ["user.read", "asset.upload", "asset.update", "asset.read"]])
        try fixture.writeDistinctJPEGs(1, prefix: "T")
        let result = try fixture.cairn(["import", fixture.source, "--plain", "--tag", "Trip"])
        #expect(result.status == 77, "\(result.standardOutput)\(result.standardError)")
        #expect((result.standardOutput + result.standardError).contains("lacks the permissions tag.asset, tag.create"),
                "\(result.standardOutput)\(result.standardError)")
        #expect(try await fixture.double.state().assets.isEmpty)
    }
}
