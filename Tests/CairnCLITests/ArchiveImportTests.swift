import CairnTesting
import Foundation
import Glibc
import Testing

/// Issue 65, item 1: with `--archives read`, the zips and tars in a source are imported in place, without unpacking,
/// into a library and into Immich.
@Suite struct ArchiveImportTests {
    /// Four distinct photos in the folder's `scratch/`, and their SHA1s.
    static func photos(in folder: TemporaryDirectory) throws -> [(path: String, sha1: String)] {
        try (0..<4).map { index in
            let path = try folder.write(try DistinctJPEG.data(byteCount: 6_000 + index, seed: UInt8(10 + index)),
                                        to: "scratch/IMG_\(index).jpg")
            return (path, String(String(decoding: try ExternalTool.run(["sha1sum", path]), as: UTF8.self).prefix(40)))
        }
    }

    /// A Takeout-shaped zip (one photo deflated, one stored, a photo's JSON, an album's, an entry that would leave
    /// the archive) and a tgz of two photos.
    static func archives(in folder: TemporaryDirectory, photos: [(path: String, sha1: String)]) throws {
        let trip = "Takeout/Google Photos/Trip"
        try TestArchive.write([
            .file("\(trip)/IMG_0.jpg", from: photos[0].path),
            .file("\(trip)/IMG_1.jpg", from: photos[1].path, stored: true),
            .text("\(trip)/IMG_0.jpg.json", #"{"title": "IMG_0.jpg", "photoTakenTime": {"timestamp": "1500000000"}, "#
                  + #""geoData": {"latitude": 48.8584, "longitude": 2.2945, "altitude": 0}}"#),
            .text("\(trip)/métadonnées.json", #"{"title": "Paris", "description": "", "date": {"timestamp": "0"}}"#),
            .text("../../escaped.jpg", "outside"),
        ], to: folder.subpath("src/trip.zip"))
        try TestArchive.write([.file("DCIM/IMG_2.jpg", from: photos[2].path), .file("DCIM/IMG_3.jpg", from: photos[3].path)],
                              to: folder.subpath("src/card.tgz"))
    }

    @Test func archivesAreImportedInPlaceWithTheirTakeoutFactsAndARescanReadsNothingNew() throws {
        let folder = try TemporaryDirectory()
        let photos = try Self.photos(in: folder)
        try Self.archives(in: folder, photos: photos)
        let library = folder.subpath("lib")
        func cairn(_ arguments: [String]) throws -> CairnBinary.Result {
            try CairnBinary.run(arguments + ["--library", library])
        }

        // Left alone (the default), archives are other files.
        let ignored = try cairn(["import", folder.subpath("src"), "--plain", "--clips", "off"])
        #expect(ignored.status == 0 && ignored.standardOutput.contains("2 not media"), "\(ignored.standardOutput)")

        let result = try cairn(["import", folder.subpath("src"), "--plain", "--clips", "off", "--archives", "read"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("skipped trip.zip/../../escaped.jpg: a path that leaves the archive"))
        #expect(result.standardOutput.contains("1 album from Google Takeout kept or grown: Paris"))
        #expect(!FileManager.default.fileExists(atPath: folder.subpath("escaped.jpg")))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/../escaped.jpg"))

        let listed = try cairn(["ls", "--json"])
        let assets = listed.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let bySource = Dictionary(uniqueKeysWithValues: assets.compactMap { asset in
            (asset["firstSourcePath"] as? String).map { ($0, asset) }
        })
        #expect(Set(bySource.keys) == ["trip.zip/Takeout/Google Photos/Trip/IMG_0.jpg",
                                       "trip.zip/Takeout/Google Photos/Trip/IMG_1.jpg",
                                       "card.tgz/DCIM/IMG_2.jpg", "card.tgz/DCIM/IMG_3.jpg"])
        // Each original is the entry's bytes: its name is their SHA1, and `cairn check` reads them all again.
        for (index, path) in ["trip.zip/Takeout/Google Photos/Trip/IMG_0.jpg",
                              "trip.zip/Takeout/Google Photos/Trip/IMG_1.jpg",
                              "card.tgz/DCIM/IMG_2.jpg", "card.tgz/DCIM/IMG_3.jpg"].enumerated() {
            #expect((bySource[path]?["sha1"] as? String) == photos[index].sha1, "\(path)")
        }
        let check = try cairn(["check"])
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
        // The photo's JSON, from inside the zip: its capture time, and the album it is in.
        let zero = try #require(bySource["trip.zip/Takeout/Google Photos/Trip/IMG_0.jpg"])
        #expect(zero["captureDate"] as? String == "2017-07-14T02:40:00Z", "\(zero)")
        let album = try cairn(["ls", "--album", "Paris", "--json"])
        #expect(album.standardOutput.split(separator: "\n").count == 2)

        // Nothing changed: nothing is read again. To prove it, every byte of both archives is zeroed in place with
        // their stat facts kept (inode, size, modification time to the nanosecond): a rescan that read any of it
        // would fail to list or hash them.
        for archive in ["src/trip.zip", "src/card.tgz"] { try Self.zeroKeepingStatFacts(folder.subpath(archive)) }
        let again = try cairn(["import", folder.subpath("src"), "--plain", "--clips", "off", "--archives", "read"])
        #expect(again.status == 0, "\(again.standardOutput)\(again.standardError)")
        #expect(again.standardOutput.contains("archives: 0 read, 2 unchanged"), "\(again.standardOutput)")
        #expect(again.standardOutput.contains("hashed       0"), "\(again.standardOutput)")
        #expect(again.standardOutput.contains("unchanged    4"), "\(again.standardOutput)")
        #expect(!again.standardOutput.contains("cannot read"), "\(again.standardOutput)")
    }

    /// Overwrites the file with zeros, same inode and size, and puts its modification time back to the nanosecond.
    static func zeroKeepingStatFacts(_ path: String) throws {
        var before = stat()
        #expect(lstat(path, &before) == 0)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.write(contentsOf: Data(count: Int(before.st_size)))
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0)
        var after = stat()
        #expect(lstat(path, &after) == 0)
        #expect(after.st_ino == before.st_ino && after.st_size == before.st_size
                && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec && after.st_mtim.tv_sec == before.st_mtim.tv_sec)
    }

    @Test func aTruncatedArchiveImportsWhatPrecedesTheDamageAndNamesTheRest() throws {
        let folder = try TemporaryDirectory()
        let photos = try Self.photos(in: folder)
        let big = try (0..<4).map { index in
            try folder.write(try DistinctJPEG.data(byteCount: 60_000, seed: UInt8(40 + index)), to: "scratch/BIG_\(index).jpg")
        }
        try TestArchive.write(big.enumerated().map { .file("BIG_\($0.offset).jpg", from: $0.element, stored: true) }
                              + [.file("IMG_0.jpg", from: photos[0].path)],
                              to: folder.subpath("src/cut.zip"), truncatedTo: 0.6)
        let library = folder.subpath("lib")
        let result = try CairnBinary.run(["import", folder.subpath("src"), "--plain", "--clips", "off", "--archives", "read",
                                          "--library", library])
        #expect(result.status != 0)
        #expect(result.standardOutput.contains("cannot read cut.zip: the archive cannot be read after entry"),
                "\(result.standardOutput)")
        let listed = try CairnBinary.run(["ls", "--json", "--library", library])
        let imported = listed.standardOutput.split(separator: "\n").count
        #expect(imported >= 1 && imported < 5, "\(listed.standardOutput)")
    }

    @Test func archiveEntriesArriveInImmichWithTheirBytes() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        let photos = try Self.photos(in: fixture.folder)
        try Self.archives(in: fixture.folder, photos: photos)
        let result = try fixture.cairn(["import", fixture.source, "--plain", "--archives", "read"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let state = try await fixture.double.state()
        #expect(state.assets.count == 4)
        for (index, photo) in photos.enumerated() {
            let asset = try #require(state.assets(withChecksum: photo.sha1).first, "IMG_\(index).jpg did not arrive")
            #expect(asset.originalFileName == "IMG_\(index).jpg")
        }
        // The copies the uploads were sent from are gone.
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: fixture.library).filter { $0.hasSuffix(".partial") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// An XMP beside an entry in its archive, or in another part of a split one, goes with the upload as a sidecar
    /// beside a file does; its copy is gone after.
    @Test func anXMPInAnArchiveGoesToImmichWithItsPhoto() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        let photos = try Self.photos(in: fixture.folder)
        let xmp = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF/></x:xmpmeta>"#
        try TestArchive.write([.file("DCIM/IMG_0.jpg", from: photos[0].path), .text("DCIM/IMG_0.jpg.xmp", xmp),
                               .file("DCIM/IMG_1.jpg", from: photos[1].path), .file("DCIM/IMG_2.jpg", from: photos[2].path)],
                              to: fixture.folder.subpath("src/card-001.zip"))
        try TestArchive.write([.text("DCIM/IMG_1.XMP", xmp + " ")], to: fixture.folder.subpath("src/card-002.zip"))
        let result = try fixture.cairn(["import", fixture.source, "--plain", "--archives", "read"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let assets = try await fixture.double.state().assets
        func sidecar(_ name: String) -> Int? { assets.first { $0.originalFileName == name }?.sidecarBytes }
        #expect(sidecar("IMG_0.jpg") == xmp.utf8.count && sidecar("IMG_1.jpg") == xmp.utf8.count + 1 && sidecar("IMG_2.jpg") == 0,
                "\(assets.map { ($0.originalFileName, $0.sidecarBytes) })")
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: fixture.library).filter { $0.contains(".partial") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// A split Takeout into Immich: an album whose photos and `metadata.json` sit in different parts is filled, a
    /// JSON in another part still stars its photo, and a year folder (no metadata) is no album.
    @Test func aSplitTakeoutsAlbumsAndStarsReachImmich() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        let photos = try Self.photos(in: fixture.folder)
        let trip = "Takeout/Google Photos/Trip", year = "Takeout/Google Photos/Photos from 2020"
        try TestArchive.write([.file("\(trip)/IMG_0.jpg", from: photos[0].path), .file("\(year)/IMG_2.jpg", from: photos[2].path),
                               .text("\(trip)/IMG_1.jpg.json", #"{"title": "IMG_1.jpg", "favorited": true, "photoTakenTime": {"timestamp": "1600000000"}}"#)],
                              to: fixture.folder.subpath("src/takeout-20261128T153000Z-001.zip"))
        try TestArchive.write([.file("\(trip)/IMG_1.jpg", from: photos[1].path),
                               .text("\(trip)/métadonnées.json", #"{"title": "Trip, 2020", "description": ""}"#)],
                              to: fixture.folder.subpath("src/takeout-20261128T153000Z-002.zip"))
        let result = try fixture.cairn(["sync", fixture.source, "--plain", "--archives", "read", "--album-from", "takeout"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let assets = try await fixture.double.state().assets
        #expect(assets.filter { $0.albums == ["Trip, 2020"] }.map(\.originalFileName).sorted() == ["IMG_0.jpg", "IMG_1.jpg"],
                "\(assets.map { ($0.originalFileName, $0.albums) })")
        let starred = try #require(assets.first { $0.originalFileName == "IMG_1.jpg" })
        #expect(starred.isFavorite && starred.dateTimeOriginal?.hasPrefix("2020-09-13") == true, "\(starred)")
        #expect(assets.first { $0.originalFileName == "IMG_2.jpg" }?.albums == [], "a year folder is no album")
    }

    /// A Takeout split in parts is one folder: a photo's JSON in another part than the photo still dates it; a part
    /// that vanished holds its entries as an unmounted disk would, until the user says it went on purpose.
    @Test func aSplitTakeoutIsOneFolderAndAVanishedPartDeletesNothingUnlessAccepted() throws {
        let folder = try TemporaryDirectory()
        let photos = try Self.photos(in: folder)
        let trip = "Takeout/Google Photos/Trip"
        func json(_ name: String, _ seconds: Int) -> TestArchive.Entry {
            .text("\(trip)/\(name).json", #"{"title": "\#(name)", "photoTakenTime": {"timestamp": "\#(seconds)"}}"#)
        }
        try TestArchive.write([.file("\(trip)/IMG_0.jpg", from: photos[0].path), json("IMG_1.jpg", 1_600_000_000)],
                              to: folder.subpath("src/takeout-20261128T153000Z-001.zip"))
        try TestArchive.write([.file("\(trip)/IMG_1.jpg", from: photos[1].path), json("IMG_0.jpg", 1_500_000_000)],
                              to: folder.subpath("src/takeout-20261128T153000Z-002.zip"))
        let library = folder.subpath("lib")
        func sync(_ extra: [String] = []) throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", folder.subpath("src"), "--plain", "--clips", "off", "--archives", "read",
                                 "--library", library] + extra)
        }
        let first = try sync()
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        let listed = try CairnBinary.run(["ls", "--json", "--library", library])
        let dates = Dictionary(uniqueKeysWithValues: listed.standardOutput.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).flatMap { asset in
                (asset["firstSourcePath"] as? String).map { ($0, asset["captureDate"] as? String ?? "none") }
            }
        })
        #expect(dates == ["takeout-20261128T153000Z.zip/\(trip)/IMG_0.jpg": "2017-07-14T02:40:00Z",
                          "takeout-20261128T153000Z.zip/\(trip)/IMG_1.jpg": "2020-09-13T12:26:40Z"])
        #expect(try sync().status == 0)

        try FileManager.default.removeItem(atPath: folder.subpath("src/takeout-20261128T153000Z-002.zip"))
        let held = try sync()
        #expect(held.status == 3, "\(held.standardOutput)")
        #expect(held.standardOutput.contains("takeout-20261128T153000Z.zip: a part of this split archive is gone"))
        #expect(held.standardOutput.contains("held by a safety rail: ") && held.standardOutput.contains("IMG_1.jpg"))

        let accepted = try sync(["--accept-vanished"])
        #expect(accepted.status == 0, "\(accepted.standardOutput)")
        #expect(accepted.standardOutput.contains("1 held by quarantine"), "\(accepted.standardOutput)")
    }

    /// An archive modified in the last minute (a download in progress) is skipped with a note, not a failure, and
    /// what it held before is not taken for deleted; the next run reads it.
    @Test func anArchiveStillBeingWrittenIsLeftForTheNextRunAndDeletesNothing() throws {
        let folder = try TemporaryDirectory()
        let photos = try Self.photos(in: folder)
        try Self.archives(in: folder, photos: photos)
        let library = folder.subpath("lib")
        func sync() throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", folder.subpath("src"), "--plain", "--clips", "off", "--archives", "read",
                                 "--apply-deletions", "--library", library])
        }
        #expect(try sync().status == 0)
        // Rewritten just now (its stat facts new, as a download's are).
        let card = folder.subpath("src/card.tgz")
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: card)
        let import_ = try CairnBinary.run(["import", folder.subpath("src"), "--plain", "--clips", "off", "--archives", "read",
                                           "--library", library])
        #expect(import_.status == 0, "not a failure: \(import_.standardOutput)")
        #expect(import_.standardOutput.contains("skipped card.tgz: an archive modified under a minute ago (still being written?): read by the next run"),
                "\(import_.standardOutput)")
        #expect(import_.standardOutput.contains("1 archives still being written"), "\(import_.standardOutput)")
        let held = try sync()
        // Its deletions are held, as for any path the walk could not read (exit 3).
        #expect(held.status == 3 && held.standardOutput.contains("0 to trash · 2 held by a safety rail")
                && held.standardOutput.contains("could not read 1 path (first: card.tgz: an archive modified under a minute ago"),
                "status \(held.status): \(held.standardOutput)")
        let listed = try CairnBinary.run(["ls", "--json", "--library", library])
        #expect(listed.standardOutput.split(separator: "\n").count == 4, "its entries are still in the library: \(listed.standardOutput)")
        // A minute later it is read again, and nothing changed.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: card)
        let later = try sync()
        #expect(later.status == 0 && !later.standardOutput.contains("still being written"), "\(later.standardOutput)")
        #expect(try CairnBinary.run(["ls", "--json", "--library", library]).standardOutput.split(separator: "\n").count == 4)
    }
}
