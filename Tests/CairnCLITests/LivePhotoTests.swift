import CairnTesting
import Foundation
import Testing

/// Issue 11, Live Photos: a still and its movie are one unit; name alone never pairs.
@Suite struct LivePhotoTests {
    static func sha1(_ path: String) throws -> String {
        String(String(decoding: try ExternalTool.run(["sha1sum", path]), as: UTF8.self).prefix(40))
    }

    @Test func aLivePhotoIsPairedADecoyIsNotAndThePairIsTrashedAndRestoredAsOne() throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        try MediaFixtures.livePhoto(in: folder.subpath("src"), stem: "IMG_0001")
        // A decoy: same base name, an unrelated clip; no identifier, and not a short QuickTime movie.
        var plain = ExifFields()
        plain.dateTimeOriginal = "2023:07:14 11:00:00"
        try MediaFixtures.jpegWithExif(at: folder.subpath("src/IMG_0002.JPG"), orientation: 1, exif: plain)
        try MediaFixtures.video(at: folder.subpath("src/IMG_0002.MP4"), seconds: 2, creationTime: "2023-07-14T11:00:00.000000Z")
        // No identifiers, but a 2 s .MOV beside a still taken within 2 s of it: paired by name and time.
        var older = ExifFields()
        older.dateTimeOriginal = "2016:05:01 09:30:00"
        try MediaFixtures.jpegWithExif(at: folder.subpath("src/IMG_0003.JPG"), orientation: 1, exif: older)
        try MediaFixtures.liveMotion(at: folder.subpath("src/IMG_0003.MOV"), identifier: nil, creationDate: "2016-05-01T09:30:01Z")
        for index in 4..<8 {  // enough other files that two deletions stay under the vanish rail
            try MediaFixtures.jpeg(at: folder.subpath("src/OTHER_\(index).JPG"), width: 64 + index, height: 48)
        }
        let library = folder.subpath("lib")
        func sync(_ extra: [String] = []) throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", folder.subpath("src"), "--library", library, "--plain"] + extra)
        }
        let first = try sync()
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        #expect(first.standardOutput.contains("paired 2 Live Photos"))

        func asset(_ name: String) throws -> [String: Any] {
            let result = try CairnBinary.run(["asset", name, "--library", library, "--json"])
            return try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        }
        let movie = try Self.sha1(folder.subpath("src/IMG_0001.MOV"))
        let stillSHA1 = try Self.sha1(folder.subpath("src/IMG_0001.JPG"))
        #expect(try asset("IMG_0001.JPG")["pairedWith"] as? String == movie)
        #expect(try asset("IMG_0001.JPG")["pairBasis"] as? String == "content identifier")
        #expect(try asset("IMG_0001.MOV")["pairedWith"] as? String == stillSHA1)
        #expect(try asset("IMG_0002.JPG")["pairedWith"] == nil)
        #expect(try asset("IMG_0003.JPG")["pairBasis"] as? String == "name and time")
        // A Live Photo's clip is its movie: its still gets none. The decoy's still, left unpaired, gets its clip
        // after pairing, and a still with no movie beside it gets one in the lanes.
        func clipRoles(_ name: String) throws -> [String] {
            (try asset(name)["derived"] as? [[String: Any]] ?? []).compactMap { $0["role"] as? String }.filter { $0 == "clip" }
        }
        #expect(try clipRoles("IMG_0001.JPG").isEmpty && clipRoles("IMG_0003.JPG").isEmpty)
        #expect(try clipRoles("IMG_0002.JPG") == ["clip"] && clipRoles("OTHER_4.JPG") == ["clip"])
        #expect(first.standardOutput.contains("made 1 clip after pairing"), "\(first.standardOutput)")
        // Listed together: one line for the Live Photo, naming its movie.
        let listed = try CairnBinary.run(["ls", "--library", library, "--json"]).standardOutput.split(separator: "\n")
        #expect(listed.contains { $0.contains("\"sha1\":\"\(stillSHA1)\"") && $0.contains("\"motion\":\"\(movie)\"") })
        #expect(!listed.contains { $0.contains("\"sha1\":\"\(movie)\"") })
        // The still's and the movie's capture instants are within 2 s (EXIF floating time aside, the movie's is known).
        let movieTime = try #require(try asset("IMG_0001.MOV")["captureTime"] as? [String: Any])
        #expect(movieTime["offset"] as? String == "+02:00" && movieTime["local"] as? String == "2023-07-14T10:44:01")

        // The phone deletes both files of the Live Photo: trashed together, restored together.
        for name in ["IMG_0001.JPG", "IMG_0001.MOV"] { try FileManager.default.removeItem(atPath: folder.subpath("src/\(name)")) }
        _ = try sync(["--apply-deletions"])
        let trashed = try sync(["--apply-deletions", "--quarantine-days", "0"])
        #expect(trashed.status == 0, "\(trashed.standardOutput)\(trashed.standardError)")
        #expect(trashed.standardOutput.contains("moved 2 assets to trash"))
        let runID = try #require(trashed.standardOutput.split(separator: "\n")
            .first { $0.contains("run ") && $0.contains("started") }
            .flatMap { $0.split(separator: " ").last.map { String($0.dropLast()) } })
        // Asking for the still alone brings its movie back too.
        let restore = try CairnBinary.run(["restore", "--run-id", runID, "--asset", stillSHA1, "--library", library])
        #expect(restore.status == 0, "\(restore.standardOutput)\(restore.standardError)")
        #expect(try asset(stillSHA1)["pairedWith"] as? String == movie)
        #expect(try asset(movie)["sha1"] as? String == movie)
    }
}

/// Issue 11, motion photos: the movie a Samsung or Google still carries becomes its clip, as the camera made it.
@Suite struct MotionPhotoTests {
    @Test(arguments: [false, true])
    func theEmbeddedMovieBecomesTheClipByteForByte(google: Bool) throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        let still = try MediaFixtures.jpeg(at: folder.subpath("still.jpg"), width: 400, height: 300)
        let movie = try MediaFixtures.video(at: folder.subpath("motion.mp4"), width: 320, height: 240, seconds: 1.5)
        let name = google ? "PXL_20240101_motion.jpg" : "20240101_samsung.jpg"
        let embedded = try StillFixtures.motionPhoto(at: folder.subpath("src/\(name)"), still: still, movie: movie, google: google)
        let library = folder.subpath("lib")
        let result = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--quiet"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")

        let shown = try CairnBinary.run(["asset", name, "--library", library, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any])
        let clip = try #require((object["derived"] as? [[String: Any]])?.first { $0["role"] as? String == "clip" })
        #expect(clip["format"] as? String == "h264" && clip["width"] as? Int == 320 && clip["height"] as? Int == 240)
        // No re-encode: the clip is the camera's movie, byte for byte (so every frame is identical).
        let path = try #require(clip["path"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == embedded)
        // And the still is still a still, with its own thumbnail.
        #expect(object["kind"] as? String == "photo" && object["width"] as? Int == 400)
    }
}

/// Issue 11, sidecars: stored byte-identical, linked to their media (on a later run too), and filling what the
/// photo lacks.
@Suite struct SidecarTests {
    @Test func sidecarsAreStoredLinkedAndFillMissingDatesAndPlaces() throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        // Photos without EXIF (as Takeout exports often are, and as ffmpeg makes them).
        try MediaFixtures.jpeg(at: folder.subpath("src/IMG_0001.jpg"), width: 160, height: 120)
        try MediaFixtures.jpeg(at: folder.subpath("src/IMG_0002.jpg"), width: 161, height: 120)
        let takeout = #"{"title": "IMG_0001.jpg", "photoTakenTime": {"timestamp": "1689324240", "formatted": "14 Jul 2023"}, "#
            + #""geoData": {"latitude": 48.8584, "longitude": 2.2945, "altitude": 35.0}}"#
        try folder.write(Data(takeout.utf8), to: "src/IMG_0001.jpg.supplemental-metadata.json")
        let xmp = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description exif:DateTimeOriginal="2019-03-02T15:04:05+01:00" xmp:Rating="4"/></rdf:RDF></x:xmpmeta>"#
        try folder.write(Data(xmp.utf8), to: "src/IMG_0002.xmp")
        let library = folder.subpath("lib")
        let result = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain", "--clips", "off"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("2 sidecars stored with their media"))

        func asset(_ name: String) throws -> [String: Any] {
            let shown = try CairnBinary.run(["asset", name, "--library", library, "--json"])
            return try #require(try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any])
        }
        let first = try asset("IMG_0001.jpg")
        let sidecars = try #require(first["sidecars"] as? [[String: Any]])
        #expect(sidecars.count == 1 && sidecars[0]["kind"] as? String == "takeout")
        let stored = try #require(sidecars[0]["path"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: stored)) == Data(takeout.utf8))
        let time = try #require(first["captureTime"] as? [String: Any])
        #expect(time["instant"] as? String == "2023-07-14T08:44:00Z" && time["source"] as? String == "takeout-json")
        #expect(first["gpsSource"] as? String == "takeout-json")
        let second = try asset("IMG_0002.jpg")
        let xmpTime = try #require(second["captureTime"] as? [String: Any])
        #expect(xmpTime["offset"] as? String == "+01:00" && xmpTime["source"] as? String == "xmp")

        // A sidecar that arrives after its media is linked on the next run.
        try folder.write(Data("<plist>adjustments</plist>".utf8), to: "src/IMG_0002.AAE")
        let later = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain", "--clips", "off"])
        #expect(later.status == 0)
        let kinds = try #require(try asset("IMG_0002.jpg")["sidecars"] as? [[String: Any]]).compactMap { $0["kind"] as? String }
        #expect(Set(kinds) == ["xmp", "aae"])
    }
}
