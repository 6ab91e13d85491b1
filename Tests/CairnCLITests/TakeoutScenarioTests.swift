import CairnTesting
import Foundation
import Testing

/// Issue 65's whole scenario: a Takeout of three zip parts and a tgz, read in place, into a library and into the
/// Immich test server, with everything the JSONs knew, a RAW+JPEG pair and a five-frame burst split over two parts
/// as stacks, the trashed photo held back, and a rescan that reads no archive byte.
@Suite struct TakeoutScenarioTests {
    static let part = "takeout-20261128T153000Z"
    static let google = "Takeout/Google Photos"

    /// Writes the archives into `folder`'s `src/`.
    static func writeTakeout(in folder: TemporaryDirectory) throws {
        let scratch = folder.subpath("scratch")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        func photo(_ name: String, width: Int, date: String, subsec: String? = nil) throws -> String {
            var exif = ExifFields()
            exif.dateTimeOriginal = date
            exif.subSecTimeOriginal = subsec
            return try MediaFixtures.jpegWithExif(at: scratch + "/" + name, width: width, exif: exif)
        }
        let trip = "\(google)/Trip", year = "\(google)/Photos from 2021", holiday = "\(google)/Urlaub"
        let frames = try (0..<5).map { try photo("DSC_010\($0).JPG", width: 300 + 2 * $0, date: "2021:06:01 10:00:00",
                                                 subsec: String(100 + 200 * $0)) }
        let star = try photo("STAR.jpg", width: 200, date: "2020:02:01 10:00:00")
        let arch = try photo("ARCH.jpg", width: 202, date: "2020:02:02 10:00:00")
        let gone = try photo("GONE.jpg", width: 204, date: "2020:02:03 10:00:00")
        let card = try photo("CARD.jpg", width: 206, date: "2020:02:04 10:00:00")
        let pairJPEG = try photo("IMG_2000.JPG", width: 208, date: "2009:07:21 13:03:20")
        let raw = StillFixtures.committed("canon-eos-30d.cr2")
        try TestArchive.write([
            .file("\(trip)/STAR.jpg", from: star),
            .file("\(trip)/ARCH.jpg", from: arch, stored: true),
            .text("\(trip)/STAR.jpg.json", #"{"title": "STAR.jpg", "favorited": true, "description": "Ana's birthday", "#
                  + #""people": [{"name": "Ana"}], "photoTakenTime": {"timestamp": "1580551200"}}"#),
            .text("\(trip)/métadonnées.json", #"{"title": "Paris", "description": ""}"#),
            .file("\(year)/DSC_0100.JPG", from: frames[0]), .file("\(year)/DSC_0101.JPG", from: frames[1], stored: true),
            .file("\(year)/DSC_0102.JPG", from: frames[2]),
        ], to: folder.subpath("src/\(part)-001.zip"))
        try TestArchive.write([
            // ARCH.jpg's JSON in another part than ARCH.jpg.
            .text("\(trip)/ARCH.jpg.json", #"{"title": "ARCH.jpg", "archived": true, "photoTakenTime": {"timestamp": "1580637600"}}"#),
            .file("\(year)/DSC_0103.JPG", from: frames[3]), .file("\(year)/DSC_0104.JPG", from: frames[4]),
            .file("\(trip)/GONE.jpg", from: gone),
            .text("\(trip)/GONE.jpg.json", #"{"title": "GONE.jpg", "trashed": true, "photoTakenTime": {"timestamp": "1580724000"}}"#),
        ], to: folder.subpath("src/\(part)-002.zip"))
        try TestArchive.write([
            .file("\(holiday)/IMG_2000.JPG", from: pairJPEG), .file("\(holiday)/IMG_2000.CR2", from: raw, stored: true),
            .text("\(holiday)/Metadaten.json", #"{"title": "Urlaub", "description": ""}"#),
        ], to: folder.subpath("src/\(part)-003.zip"))
        try TestArchive.write([.file("DCIM/CARD.jpg", from: card)], to: folder.subpath("src/card.tgz"))
    }

    static func byName(_ listing: String) -> [String: [String: Any]] {
        var found: [String: [String: Any]] = [:]
        for line in TakeoutFactsTests.jsonLines(listing) {
            if let path = line["firstSourcePath"] as? String, let name = path.split(separator: "/").last {
                found[String(name)] = line
            }
        }
        return found
    }

    @Test func aTakeoutInFourArchivesArrivesWholeInTheLibrary() throws {
        let folder = try TemporaryDirectory()
        try Self.writeTakeout(in: folder)
        let library = folder.subpath("lib")
        func cairn(_ arguments: [String]) throws -> CairnBinary.Result {
            try CairnBinary.run(arguments + ["--library", library])
        }
        let result = try cairn(["import", folder.subpath("src"), "--plain", "--clips", "off", "--archives", "read"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("1 in Google Photos' trash"), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("stacked 7 photos in 2 stacks"), "\(result.standardOutput)")

        let listed = Self.byName(try cairn(["ls", "--json"]).standardOutput)
        #expect(Set(listed.keys) == ["STAR.jpg", "ARCH.jpg", "DSC_0100.JPG", "IMG_2000.JPG", "CARD.jpg"], "\(listed.keys)")
        #expect((listed["DSC_0100.JPG"]?["stack"] as? [String])?.count == 5)
        #expect((listed["IMG_2000.JPG"]?["stack"] as? [String])?.count == 2)
        let star = try #require(listed["STAR.jpg"]?["googlePhotos"] as? [String: Any])
        #expect(star["favorite"] as? Bool == true && star["people"] as? [String] == ["Ana"]
                && star["description"] as? String == "Ana's birthday", "\(star)")
        let arch = try #require(listed["ARCH.jpg"]?["googlePhotos"] as? [String: Any])
        #expect(arch["archived"] as? Bool == true, "its JSON sat in another part: \(arch)")
        let raw = try cairn(["asset", "--json", folder.subpath("src/\(Self.part).zip/\(Self.google)/Urlaub/IMG_2000.CR2")])
        let rawDetails = try #require(TakeoutFactsTests.jsonLines(raw.standardOutput).first)
        #expect(rawDetails["stackBasis"] as? String == "raw+jpeg", "\(raw.standardOutput)\(raw.standardError)")
        #expect(rawDetails["albums"] as? [String] == ["Urlaub"], "\(rawDetails)")
        #expect(TakeoutFactsTests.names(try cairn(["ls", "--album", "Paris", "--json"]).standardOutput) == ["ARCH.jpg", "STAR.jpg"])

        // Nothing changed: no byte of an archive is read again (each is zeroed in place with its stat facts kept),
        // not even the trashed photo's JSON, whose hold is decided again each run from what the catalog kept of it.
        for name in ["\(Self.part)-001.zip", "\(Self.part)-002.zip", "\(Self.part)-003.zip", "card.tgz"] {
            try ArchiveImportTests.zeroKeepingStatFacts(folder.subpath("src/" + name))
        }
        let again = try cairn(["import", folder.subpath("src"), "--plain", "--clips", "off", "--archives", "read"])
        #expect(again.status == 0 && again.standardOutput.contains("hashed       0"), "\(again.standardOutput)")
        #expect(again.standardOutput.contains("archives: 0 read, 4 unchanged"), "\(again.standardOutput)")
        #expect(again.standardOutput.contains("1 in Google Photos' trash"), "\(again.standardOutput)")
        #expect(!again.standardOutput.contains("cannot read") && !again.standardOutput.contains("stacked"), "\(again.standardOutput)")
    }

    @Test func aTakeoutInFourArchivesArrivesWholeInImmich() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        try Self.writeTakeout(in: fixture.folder)
        let result = try fixture.cairn(["sync", fixture.source, "--plain", "--archives", "read", "--album-from", "takeout"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let assets = try await fixture.double.state().assets
        func asset(_ name: String) throws -> ImmichDouble.State.Asset {
            try #require(assets.first { $0.originalFileName == name }, "\(name)")
        }
        let expected = Set(["STAR.jpg", "ARCH.jpg", "CARD.jpg", "IMG_2000.JPG", "IMG_2000.CR2"] + (0..<5).map { "DSC_010\($0).JPG" })
        #expect(Set(assets.map(\.originalFileName)) == expected, "the trashed photo is held back")
        let star = try asset("STAR.jpg")
        #expect(star.isFavorite && star.description == "Ana's birthday" && star.tags == ["People/Ana"]
                && star.albums == ["Paris"], "\(star)")
        let arch = try asset("ARCH.jpg")
        #expect(arch.visibility == "archive" && arch.albums == ["Paris"], "\(arch)")
        let cover = try asset("DSC_0100.JPG")
        #expect(cover.stackPrimaryAssetId == cover.id && cover.stackId != nil)
        for frame in 1..<5 { #expect(try asset("DSC_010\(frame).JPG").stackId == cover.stackId) }
        let jpeg = try asset("IMG_2000.JPG"), raw = try asset("IMG_2000.CR2")
        #expect(raw.stackId == jpeg.stackId && raw.stackPrimaryAssetId == jpeg.id && jpeg.albums == ["Urlaub"], "\(raw)")
    }
}
