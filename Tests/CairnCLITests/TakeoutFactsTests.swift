import CairnTesting
import Foundation
import Testing

/// Issue 65, item 2: what Google Photos knew of a photo (star, archived, caption, people, its trash, partner
/// sharing), read from the Takeout JSON beside it, kept in the library (`cairn asset`, `cairn ls --favorite
/// --person`) and sent to Immich (favourite, archived visibility, description, `People/<name>` tags); what sat in
/// Google's trash is held back unless `--include-trashed`.
@Suite struct TakeoutFactsTests {
    /// A Takeout folder: a starred photo with a caption and two people (one JSON in Takeout's newer
    /// `.supplemental-metadata` name), an archived one, one a partner shared that sat in Google's trash, a plain one.
    static func writeTakeout(in folder: TemporaryDirectory) throws -> String {
        let photos = folder.subpath("src/Takeout/Google Photos/Photos from 2021")
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        for (index, name) in ["STAR.jpg", "ARCH.jpg", "PART.jpg", "PLAIN.jpg"].enumerated() {
            try MediaFixtures.jpeg(at: photos + "/" + name, width: 120 + index, height: 80)
        }
        let jsons = [
            "STAR.jpg.supplemental-metadata.json": #"{"title": "STAR.jpg", "description": "Ana's birthday", "favorited": true, "#
                + #""people": [{"name": "Ana Lópes"}, {"name": "Ben"}, {"name": "Ben"}], "photoTakenTime": {"timestamp": "1625140800"}}"#,
            "ARCH.jpg.json": #"{"title": "ARCH.jpg", "archived": true, "description": "", "photoTakenTime": {"timestamp": "1625140900"}}"#,
            "PART.jpg.json": #"{"title": "PART.jpg", "trashed": true, "googlePhotosOrigin": {"fromPartnerSharing": {}}, "#
                + #""people": [{"name": "Ben"}], "photoTakenTime": {"timestamp": "1625141000"}}"#,
            "PLAIN.jpg.json": #"{"title": "PLAIN.jpg", "trashed": false, "favorited": false, "photoTakenTime": {"timestamp": "1625141100"}}"#,
        ]
        for (name, text) in jsons { try text.write(toFile: photos + "/" + name, atomically: true, encoding: .utf8) }
        return photos
    }

    static func jsonLines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func names(_ listing: String) -> [String] {
        jsonLines(listing).compactMap { ($0["firstSourcePath"] as? String)?.split(separator: "/").last.map(String.init) }.sorted()
    }

    @Test func whatGooglePhotosKnewIsKeptShownAndFiltered() throws {
        let folder = try TemporaryDirectory()
        let photos = try Self.writeTakeout(in: folder)
        let library = folder.subpath("lib")
        // What sat in Google Photos' trash is held back, named, and in the report with its reason.
        let report = folder.subpath("report.ndjson")
        let first = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain", "--clips", "off",
                                         "--report", report])
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        #expect(first.standardOutput.contains("skipped 1 file that sat in Google Photos' trash (their Takeout JSON says so; "
                                              + "--include-trashed imports them): Takeout/Google Photos/Photos from 2021/PART.jpg"),
                "\(first.standardOutput)")
        let line = try #require(Self.jsonLines(try String(contentsOfFile: report, encoding: .utf8))
            .first { ($0["path"] as? String)?.hasSuffix("PART.jpg") == true })
        #expect(line["outcome"] as? String == "skipped", "\(line)")
        #expect((line["reason"] as? String)?.contains("in Google Photos' trash (PART.jpg.json says so") == true, "\(line)")
        let absent = try CairnBinary.run(["asset", photos + "/PART.jpg", "--library", library])
        #expect(absent.status == 1, "\(absent.standardOutput)")
        // Held back again, not taken for gone: a sync plans no deletion of it.
        let sync = try CairnBinary.run(["sync", folder.subpath("src"), "--library", library, "--plain", "--clips", "off"])
        #expect(sync.status == 0 && sync.standardOutput.contains("skipped 1 file that sat in Google Photos' trash"),
                "\(sync.standardOutput)\(sync.standardError)")
        let pending = try CairnBinary.run(["pending", "list", "--library", library])
        #expect(pending.status == 0 && pending.standardOutput.contains("0 pending") && !pending.standardOutput.contains("PART.jpg"),
                "\(pending.standardOutput)")
        let result = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain", "--clips", "off",
                                          "--include-trashed"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(!result.standardOutput.contains("Google Photos' trash"), "\(result.standardOutput)")

        let star = try CairnBinary.run(["asset", photos + "/STAR.jpg", "--library", library])
        #expect(star.standardOutput.contains("google     favourite\n"), "\(star.standardOutput)")
        #expect(star.standardOutput.contains("caption    Ana's birthday\n"), "\(star.standardOutput)")
        #expect(star.standardOutput.contains("people     Ana Lópes, Ben\n"), "a name once, in the JSON's order: \(star.standardOutput)")
        let partner = try CairnBinary.run(["asset", photos + "/PART.jpg", "--library", library])
        #expect(partner.standardOutput.contains("google     in its trash · shared by a partner\n"), "\(partner.standardOutput)")
        let archived = try CairnBinary.run(["asset", photos + "/ARCH.jpg", "--library", library, "--json"])
        let facts = try #require(Self.jsonLines(archived.standardOutput).first?["googlePhotos"] as? [String: Any])
        #expect(facts["archived"] as? Bool == true && facts["description"] == nil && facts["favorite"] == nil, "\(facts)")
        let plain = try CairnBinary.run(["asset", photos + "/PLAIN.jpg", "--library", library, "--json"])
        #expect(Self.jsonLines(plain.standardOutput).first?["googlePhotos"] == nil, "\(plain.standardOutput)")

        func ls(_ extra: [String]) throws -> [String] {
            let listed = try CairnBinary.run(["ls", "--library", library, "--json"] + extra)
            #expect(listed.status == 0, "\(listed.standardError)")
            return Self.names(listed.standardOutput)
        }
        #expect(try ls(["--favorite"]) == ["STAR.jpg"])
        #expect(try ls(["--person", "ben"]) == ["PART.jpg", "STAR.jpg"])
        #expect(try ls(["--person", "ana lopes"]) == ["STAR.jpg"], "any case, any accent")
        #expect(try ls(["--person", "Zed"]).isEmpty)
        #expect(try ls(["--favorite", "--person", "Ben", "--kind", "photo"]) == ["STAR.jpg"])
        let empty = try CairnBinary.run(["ls", "--library", library, "--person", " "])
        #expect(empty.status == 64 && empty.standardError.contains("--person needs a name"), "\(empty.standardError)")
    }

    @Test func whatGooglePhotosKnewReachesImmich() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        _ = try Self.writeTakeout(in: fixture.folder)
        let result = try fixture.sync(["--include-trashed"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("tagged 2 assets with the 2 people Google Photos named (People/<name>)"),
                "\(result.standardOutput)")
        let assets = try await fixture.double.state().assets
        func asset(_ name: String) throws -> ImmichDouble.State.Asset {
            try #require(assets.first { $0.originalFileName == name })
        }
        let star = try asset("STAR.jpg")
        #expect(star.isFavorite && star.description == "Ana's birthday" && star.visibility == "timeline", "\(star)")
        // The leaf tags alone: Immich makes `People` as their parent, and tags the asset with what it is given.
        #expect(star.tags.sorted() == ["People/Ana Lópes", "People/Ben"], "\(star.tags)")
        let archived = try asset("ARCH.jpg")
        #expect(archived.visibility == "archive" && !archived.isFavorite && archived.description == "", "\(archived)")
        #expect(try asset("PART.jpg").tags == ["People/Ben"])
        let plain = try asset("PLAIN.jpg")
        #expect(!plain.isFavorite && plain.visibility == "timeline" && plain.tags.isEmpty, "\(plain)")
    }

    /// A key that may not make tags: the people are said not sent, and everything else still arrives.
    @Test func aKeyWithoutTagPermissionsSaysThePeopleWereNotSent() async throws {
        let fixture = try ImmichDestinationTests.Fixture(
            keyPermissions: [ImmichDestinationTests.key: ["user.read", "asset.upload", "asset.update", "asset.read"]])
        _ = try Self.writeTakeout(in: fixture.folder)
        let result = try fixture.cairn(["import", fixture.source, "--plain"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("the people Google Photos named in 1 asset were not sent: the API key lacks tag.asset, tag.create"),
                "\(result.standardOutput)")
        let assets = try await fixture.double.state().assets
        let star = try #require(assets.first { $0.originalFileName == "STAR.jpg" })
        #expect(star.isFavorite && star.tags.isEmpty, "\(star)")
        #expect(!assets.contains { $0.originalFileName == "PART.jpg" }, "held back: it sat in Google Photos' trash")
    }
}
