import CairnArchive
import CairnCore
import CairnTesting
import Foundation
import Glibc
import Testing

@testable import CairnScanner

/// `--archives read`: a zip or tar in the source is walked as a folder of its own name, in place.
@Suite struct ArchiveWalkTests {
    let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10]) + Data("JFIF".utf8) + Data(repeating: 7, count: 300)

    @Test func archivesAreWalkedAsFoldersOfTheirNameAndWhatWouldLeaveThemIsRefused() throws {
        let source = try TemporaryDirectory()
        let photo = try source.write(jpeg, to: "scratch/photo.jpg")
        try source.write(jpeg, to: "src/a.jpg")
        try source.write(jpeg, to: "src/trip/z.jpg")
        try TestArchive.write([
            .file("Takeout/Google Photos/Trip/IMG_1.jpg", from: photo),
            .file("Takeout/Google Photos/Trip/IMG_2.jpg", from: photo, stored: true),
            .text("Takeout/Google Photos/Trip/IMG_1.jpg.json", #"{"title": "IMG_1.jpg"}"#),
            .text("Takeout/archive_browser.html", "<html/>"),
            .text("__MACOSX/Takeout/._IMG_1.jpg", "fork"),
            .text("../../etc/x.jpg", "outside"),
            .text("/etc/y.jpg", "absolute"),
            .link("Takeout/link.jpg", to: "/etc/passwd"),
        ], to: source.subpath("src/trip.zip"))
        try TestArchive.write([.file("DCIM/IMG_3.jpg", from: photo), .file("./DCIM//IMG_4.jpg", from: photo)],
                              to: source.subpath("src/cards.tgz"))

        let report = try SourceScanner(root: source.subpath("src"), archives: .read).scan()
        // In whole-path order, the archives' entries among the folder's own files.
        #expect(report.mediaFiles.map(\.relativePath) == [
            "a.jpg", "cards.tgz/DCIM/IMG_3.jpg", "cards.tgz/DCIM/IMG_4.jpg",
            "trip.zip/Takeout/Google Photos/Trip/IMG_1.jpg", "trip.zip/Takeout/Google Photos/Trip/IMG_2.jpg",
            "trip/z.jpg",
        ])
        #expect(report.sidecarFiles.map(\.relativePath) == ["trip.zip/Takeout/Google Photos/Trip/IMG_1.jpg.json"])
        #expect(report.otherFiles == 1 && report.junkSkipped == 1)
        #expect(Set(report.refusedEntries.map(\.relativePath)) == ["trip.zip/../../etc/x.jpg", "trip.zip//etc/y.jpg",
                                                                   "trip.zip/Takeout/link.jpg"])
        #expect(report.refusedEntries.allSatisfy { $0.reason.contains("never") })
        // Refused entries are the same on every walk: no reason to distrust it for deletions.
        #expect(report.issues.isEmpty && report.isComplete)

        // An entry's stat facts are its archive's, with its own size.
        var info = stat()
        #expect(lstat(source.subpath("src/trip.zip"), &info) == 0)
        let entry = try #require(report.mediaFiles.first { $0.relativePath.hasSuffix("IMG_2.jpg") })
        #expect(entry.fingerprint.inode == UInt64(info.st_ino) && entry.fingerprint.size == Int64(jpeg.count))
        #expect(entry.fingerprint.modificationTimeNanoseconds == FileFingerprint(info).modificationTimeNanoseconds)

        // Left alone (the default), archives are other files.
        let ignored = try SourceScanner(root: source.subpath("src")).scan()
        #expect(ignored.mediaFiles.map(\.relativePath) == ["a.jpg", "trip/z.jpg"] && ignored.otherFiles == 2)
    }

    @Test func aDamagedArchiveYieldsWhatPrecedesTheDamageAndAnIssueThatHoldsDeletions() throws {
        let source = try TemporaryDirectory()
        let photos = try (1...6).map { index in
            try source.write(Data((0..<40_000).map { _ in UInt8.random(in: 0...255) }) + jpeg, to: "scratch/\(index).jpg")
        }
        try TestArchive.write(photos.enumerated().map { .file("IMG_\($0.offset).jpg", from: $0.element, stored: true) },
                              to: source.subpath("src/cut.zip"), truncatedTo: 0.5)
        let report = try SourceScanner(root: source.subpath("src"), archives: .read).scan()
        let issue = try #require(report.issues.first)
        #expect(issue.relativePath == "cut.zip" && issue.reason.contains("remaining entries are not imported"))
        #expect(!report.isComplete)
        #expect(!report.mediaFiles.isEmpty && report.mediaFiles.count < 6)
    }

    @Test func namesAreUTF8WhenFlaggedAndCP437Otherwise() throws {
        let source = try TemporaryDirectory()
        try TestArchive.write([.text("Été/Café.jpg", "x", cp437: true), .text("Noël/Crème.jpg", "y")],
                              to: source.subpath("src/names.zip"))
        let report = try SourceScanner(root: source.subpath("src"), archives: .read).scan()
        #expect(report.mediaFiles.map(\.relativePath) == ["names.zip/Noël/Crème.jpg", "names.zip/Été/Café.jpg"])
    }

    /// A name without the flag: UTF-8 when its bytes are (macOS, Linux, 7-Zip write so), Info-ZIP's Unicode Path
    /// field when present; CP437 only for bytes that are not UTF-8.
    @Test func unflaggedNamesAreReadAsTheirWritersMeantThem() throws {
        let source = try TemporaryDirectory()
        try TestArchive.write([.text("Été/Café.jpg", "x", unflagged: .utf8), .text("Noël/Crème.jpg", "y", unflagged: .unicodePathField),
                               .text("Ürün/a.jpg", "z", cp437: true)],
                              to: source.subpath("src/names.zip"))
        let report = try SourceScanner(root: source.subpath("src"), archives: .read).scan()
        #expect(report.mediaFiles.map(\.relativePath) == ["names.zip/Noël/Crème.jpg", "names.zip/Été/Café.jpg", "names.zip/Ürün/a.jpg"])
        var bytes: [UInt8] = []
        _ = try SourceArchive.read(source.subpath("src/names.zip"), entry: "Noël/Crème.jpg") { bytes.append(contentsOf: $0) }
        #expect(bytes == Array("y".utf8))
    }

    /// A cut archive read out of order: an entry before the damage is read whole, though the reader kept from the
    /// last read stands past it and can only read on into the damage.
    @Test func anEntryBeforeTheDamageIsReadWhateverTheOrderOfTheReads() throws {
        let folder = try TemporaryDirectory()
        var generator = SplitMix64(seed: 7)
        let contents = (0..<4).map { _ in (0..<60_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) } }
        let files = try contents.enumerated().map { try folder.write(Data($0.element), to: "scratch/BIG_\($0.offset).bin") }
        try TestArchive.write(files.enumerated().map { .file("BIG_\($0.offset).jpg", from: $0.element, stored: true) },
                              to: folder.subpath("cut.zip"), truncatedTo: 0.6)
        func read(_ entry: String) throws -> [UInt8] {
            var bytes: [UInt8] = []
            _ = try SourceArchive.read(folder.subpath("cut.zip"), entry: entry) { bytes.append(contentsOf: $0) }
            return bytes
        }
        #expect(try read("BIG_1.jpg") == contents[1])
        #expect(try read("BIG_0.jpg") == contents[0])
        #expect(throws: ArchiveError.self) { try read("BIG_2.jpg") }
        #expect(try read("BIG_1.jpg") == contents[1])
    }

    /// The saved listings are a cache: one no walk used for a month goes, one a walk used stays.
    @Test func listingsNoWalkUsedForAMonthAreRemovedAndUsedOnesKept() throws {
        let folder = try TemporaryDirectory()
        let saved = SavedListings(folder: folder.subpath("cache"))
        var facts: [String: FileFingerprint] = [:]
        for name in ["a.zip", "b.zip"] {
            try TestArchive.write([.text("\(name).jpg", name)], to: folder.subpath("src/" + name))
            var info = stat()
            #expect(lstat(folder.subpath("src/" + name), &info) == 0)
            facts[name] = FileFingerprint(info)
            saved.save(SourceArchive.list(folder.subpath("src/" + name)), of: name, archive: facts[name]!)
        }
        let twoMonthsAgo = Date().addingTimeInterval(-60 * 86_400)
        for file in try FileManager.default.contentsOfDirectory(atPath: saved.folder) {
            try FileManager.default.setAttributes([.modificationDate: twoMonthsAgo], ofItemAtPath: saved.folder + "/" + file)
        }
        #expect(saved.listing(of: "a.zip", archive: facts["a.zip"]!)?.entries.map(\.name) == ["a.zip.jpg"])
        #expect(saved.removeUnused(since: Date().addingTimeInterval(-30 * 86_400)) == 1)
        #expect(saved.listing(of: "a.zip", archive: facts["a.zip"]!) != nil)
        #expect(saved.listing(of: "b.zip", archive: facts["b.zip"]!) == nil)
    }

    @Test func anArchiveStillBeingWrittenIsLeftForTheNextWalk() throws {
        let source = try TemporaryDirectory()
        try TestArchive.write([.text("a.jpg", "x")], to: source.subpath("src/download.zip"), age: 0)
        let report = try SourceScanner(root: source.subpath("src"), archives: .read).scan()
        #expect(report.mediaFiles.isEmpty)
        #expect(report.issues.isEmpty, "not a failure")
        #expect(report.settlingArchives.map(\.relativePath) == ["download.zip"])
        #expect(report.settlingArchives.first?.reason.contains("read by the next run") == true)
    }

    @Test func anEntryIsReadByItsPathThroughTheArchive() throws {
        let source = try TemporaryDirectory()
        try TestArchive.write([.text("a/one.jpg", "first"), .text("a/two.jpg", "second", cp437: true)],
                              to: source.subpath("t.tgz"))
        let split = try #require(SourceArchive.split(source.subpath("t.tgz/a/two.jpg")))
        #expect(split.archive == source.subpath("t.tgz") && split.entry == "a/two.jpg")
        var bytes: [UInt8] = []
        let count = try SourceArchive.read(split.archive, entry: split.entry) { bytes.append(contentsOf: $0) }
        #expect(String(decoding: bytes, as: UTF8.self) == "second" && count == 6)
        #expect(throws: ArchiveError.self) { try SourceArchive.read(split.archive, entry: "a/three.jpg") { _ in } }
        #expect(SourceArchive.split(source.subpath("plain/file.jpg")) == nil)
    }

    /// More than 65,535 entries: the end record is Zip64's, and an entry is still found and read at its offset.
    @Test func aZip64ArchiveIsListedAndReadAtItsOffsets() throws {
        let source = try TemporaryDirectory()
        let photo = try source.write(jpeg, to: "scratch/photo.jpg")
        try TestArchive.write([.file("a.jpg", from: photo)], to: source.subpath("src/big.zip"), filler: 66_000)
        let report = try SourceScanner(root: source.subpath("src"), archives: .read).scan()
        #expect(report.mediaFiles.map(\.relativePath) == ["big.zip/a.jpg"] && report.otherFiles == 66_000)
        var bytes: [UInt8] = []
        try SourceArchive.read(source.subpath("src/big.zip"), entry: "a.jpg") { bytes.append(contentsOf: $0) }
        #expect(Data(bytes) == jpeg)
    }

    /// Entries are read in any order, right, from a zip (at their offsets) and a tgz (readers kept where they stopped);
    /// a deflated entry whose bytes were damaged fails naming it, by its CRC-32 or its deflate stream.
    @Test(arguments: ["many.zip", "many.tgz"])
    func entriesAreReadInAnyOrderAndDamageIsNamed(_ name: String) throws {
        let source = try TemporaryDirectory()
        let contents = (0..<12).map { index in Data((0..<(5_000 + index * 700)).map { UInt8(truncatingIfNeeded: $0 * (index + 3)) }) }
        let files = try contents.enumerated().map { try source.write($0.element, to: "scratch/\($0.offset).bin") }
        try TestArchive.write(files.enumerated().map { .file("d/\($0.offset).jpg", from: $0.element) }, to: source.subpath(name))
        for index in [7, 8, 9, 2, 3, 11, 0, 5, 5, 1] {
            var bytes: [UInt8] = []
            let count = try SourceArchive.read(source.subpath(name), entry: "d/\(index).jpg") { bytes.append(contentsOf: $0) }
            #expect(Data(bytes) == contents[index] && count == Int64(contents[index].count), "entry \(index)")
        }
        guard name.hasSuffix(".zip") else { return }
        // One byte changed inside the deflated data of d/4.jpg (found by its local header's name).
        var archive = try Data(contentsOf: URL(fileURLWithPath: source.subpath(name)))
        let at = try #require(archive.range(of: Data("d/4.jpg".utf8))).upperBound + 40
        archive[at] ^= 0x5A
        try archive.write(to: URL(fileURLWithPath: source.subpath(name)))
        #expect {
            try SourceArchive.read(source.subpath(name), entry: "d/4.jpg") { _ in }
        } throws: { error in
            (error as? ArchiveError)?.entry == "d/4.jpg" && (error as? ArchiveError)?.category == .corrupt
        }
    }
}
