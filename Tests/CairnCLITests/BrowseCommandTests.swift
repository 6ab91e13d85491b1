import CairnTesting
import Foundation
import Testing

/// `cairn asset` and `cairn ls`: what the library holds, found by SHA1, source path or content.
@Suite struct BrowseCommandTests {
    @Test func assetAndLsShowWhatTheCatalogKnows() throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        var fields = ExifFields()
        fields.dateTimeOriginal = "2023:07:14 10:44:00"
        try MediaFixtures.jpegWithExif(at: folder.subpath("src/IMG_0001.JPG"), orientation: 6, exif: fields)
        try MediaFixtures.video(at: folder.subpath("src/VID_0002.MP4"), creationTime: "2021-06-01T10:20:30.000000Z")
        let library = folder.subpath("lib")
        let imported = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--quiet", "--clips", "off"])
        #expect(imported.status == 0, "\(imported.standardError)")

        // By source path (relative to its source), by absolute path and by SHA1: the same asset.
        let byPath = try CairnBinary.run(["asset", "IMG_0001.JPG", "--library", library, "--json"])
        #expect(byPath.status == 0, "\(byPath.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(byPath.standardOutput.utf8)) as? [String: Any])
        let sha1 = try #require(object["sha1"] as? String)
        #expect(object["width"] as? Int == 240 && object["height"] as? Int == 320)  // as displayed (orientation 6)
        #expect(object["cameraMake"] as? String == fields.make)
        #expect((object["sourcePaths"] as? [String]) == [folder.subpath("src/IMG_0001.JPG")])
        #expect((object["derived"] as? [[String: Any]])?.count == 2)
        #expect(object["state"] as? String == "ready")
        let time = try #require(object["captureTime"] as? [String: Any])
        #expect(time["local"] as? String == "2023-07-14T10:44:00" && time["source"] as? String == "exif")
        #expect(time["instant"] == nil, "no zone in the file: a floating time has no instant")
        let original = try #require(object["original"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: original)) == Data(contentsOf: URL(fileURLWithPath: folder.subpath("src/IMG_0001.JPG"))))

        let bySHA1 = try CairnBinary.run(["asset", sha1, "--library", library])
        #expect(bySHA1.status == 0)
        #expect(bySHA1.standardOutput.contains("taken      2023-07-14 10:44:00 local time, zone unknown (floating)"))
        let byContent = try CairnBinary.run(["asset", folder.subpath("src/IMG_0001.JPG"), "--library", library, "--json"])
        #expect(byContent.standardOutput.contains("\"sha1\":\"\(sha1)\""))
        let missing = try CairnBinary.run(["asset", "nope.jpg", "--library", library])
        #expect(missing.status == 1 && missing.standardError.contains("nope.jpg"))

        // ls: by capture time, the video (2021) before the photo (2023); filters by kind and date.
        let all = try CairnBinary.run(["ls", "--library", library]).standardOutput.split(separator: "\n")
        #expect(all.count == 2 && all[0].contains("VID_0002.MP4") && all[1].contains("IMG_0001.JPG"))
        let photos = try CairnBinary.run(["ls", "--library", library, "--kind", "photo", "--json"]).standardOutput
            .split(separator: "\n")
        #expect(photos.count == 1 && photos[0].contains("\"sha1\":\"\(sha1)\""))
        let recent = try CairnBinary.run(["ls", "--library", library, "--since", "2022-01-01"]).standardOutput
        #expect(recent.contains("IMG_0001.JPG") && !recent.contains("VID_0002.MP4"))
        let bad = try CairnBinary.run(["ls", "--library", library, "--since", "yesterday"])
        #expect(bad.status == 64 && bad.standardError.contains("--since"))
    }
}
