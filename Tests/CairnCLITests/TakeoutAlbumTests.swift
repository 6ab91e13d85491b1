import CairnTesting
import Foundation
import Testing

/// Issue 30.5: a Google Takeout album folder becomes an album (its title, description, date and members), and its
/// metadata file, under a localized name too, is kept byte-identical.
@Suite struct TakeoutAlbumTests {
    @Test func takeoutAlbumsAreImportedWithTitleMembersAndTheirMetadataKept() throws {
        let folder = try TemporaryDirectory()
        let takeout = "src/Takeout/Google Photos"
        for sub in ["Photos from 2023", "Paris 2023", "Vacances"] {
            try FileManager.default.createDirectory(atPath: folder.subpath("\(takeout)/\(sub)"), withIntermediateDirectories: true)
        }
        // The same photo in the year folder and in the album (Takeout copies it): one asset, a member of the album.
        try MediaFixtures.jpeg(at: folder.subpath("\(takeout)/Photos from 2023/IMG_0001.jpg"), width: 160, height: 120)
        try MediaFixtures.jpeg(at: folder.subpath("\(takeout)/Paris 2023/IMG_0001.jpg"), width: 160, height: 120)
        try MediaFixtures.jpeg(at: folder.subpath("\(takeout)/Paris 2023/IMG_0002.jpg"), width: 161, height: 120)
        try MediaFixtures.jpeg(at: folder.subpath("\(takeout)/Photos from 2023/IMG_0003.jpg"), width: 162, height: 120)
        try MediaFixtures.jpeg(at: folder.subpath("\(takeout)/Vacances/IMG_0004.jpg"), width: 163, height: 120)
        let paris = #"{"title": "Paris, at last", "description": "Eiffel tower and all", "access": "protected", "#
            + #""date": {"timestamp": "1689324240", "formatted": "14 juil. 2023"}}"#
        try folder.write(Data(paris.utf8), to: "\(takeout)/Paris 2023/metadata.json")
        // A French account's album: the localized name, an empty title (named by its folder).
        let vacances = #"{"title": "", "description": "", "access": "protected", "date": {"timestamp": "0"}}"#
        try folder.write(Data(vacances.utf8), to: "\(takeout)/Vacances/métadonnées.json")
        let photoJSON = #"{"title": "IMG_0002.jpg", "photoTakenTime": {"timestamp": "1689324240"}}"#
        try folder.write(Data(photoJSON.utf8), to: "\(takeout)/Paris 2023/IMG_0002.jpg.supplemental-metadata.json")

        let library = folder.subpath("lib")
        let result = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain", "--clips", "off"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("2 albums from Google Takeout kept or grown"))

        let listed = try CairnBinary.run(["albums", "--library", library, "--json"])
        let albums = listed.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(albums.count == 2)
        let parisAlbum = try #require(albums.first { $0["title"] as? String == "Paris, at last" })
        #expect(parisAlbum["members"] as? Int == 2 && parisAlbum["description"] as? String == "Eiffel tower and all")
        #expect(parisAlbum["date"] as? String == "2023-07-14T08:44:00Z")
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(parisAlbum["metadata"] as? String))) == Data(paris.utf8))
        let vacancesAlbum = try #require(albums.first { $0["title"] as? String == "Vacances" })
        #expect(vacancesAlbum["members"] as? Int == 1 && vacancesAlbum["date"] == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(vacancesAlbum["metadata"] as? String))) == Data(vacances.utf8))

        func members(_ title: String) throws -> [String] {
            let shown = try CairnBinary.run(["ls", "--album", title, "--library", library, "--json"])
            #expect(shown.status == 0, "\(shown.standardError)")
            return shown.standardOutput.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["firstSourcePath"] as? String
            }.map { String($0.split(separator: "/").last!) }.sorted()
        }
        #expect(try members("paris, AT LAST") == ["IMG_0001.jpg", "IMG_0002.jpg"])
        #expect(try members("Vacances") == ["IMG_0004.jpg"])
        let unknown = try CairnBinary.run(["ls", "--album", "Nowhere", "--library", library])
        #expect(unknown.status == 1 && unknown.standardError.contains("no album with this title"))

        let asset = try CairnBinary.run(["asset", folder.subpath("\(takeout)/Paris 2023/IMG_0001.jpg"), "--library", library])
        #expect(asset.standardOutput.contains("album      Paris, at last"))
        let outside = try CairnBinary.run(["asset", folder.subpath("\(takeout)/Photos from 2023/IMG_0003.jpg"), "--library", library])
        #expect(outside.status == 0 && !outside.standardOutput.contains("album "))

        // A photo that joins the album later is a member after the next run; nothing else changes.
        try MediaFixtures.jpeg(at: folder.subpath("\(takeout)/Paris 2023/IMG_0005.jpg"), width: 164, height: 120)
        let again = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain", "--clips", "off"])
        #expect(again.status == 0)
        #expect(again.standardOutput.contains("1 album from Google Takeout kept or grown: Paris, at last"))
        #expect(try members("Paris, at last") == ["IMG_0001.jpg", "IMG_0002.jpg", "IMG_0005.jpg"])
    }
}
