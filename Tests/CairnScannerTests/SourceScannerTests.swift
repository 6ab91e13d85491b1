import CairnCore
import CairnTesting
import Foundation
import Glibc
import Testing

@testable import CairnScanner

@Suite struct SourceScannerTests {
    let jpegHeader = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10]) + Data("JFIF".utf8)

    @Test func findsMediaSkipsJunkAndCountsOthers() throws {
        let source = try TemporaryDirectory()
        try source.write(jpegHeader, to: "2024/IMG_0001.JPG")
        try source.write(Data("video".utf8), to: "2024/clip.mov")
        try source.write(Data("notes".utf8), to: "notes.txt")
        try source.write(Data("junk".utf8), to: ".DS_Store")
        try source.write(Data("junk".utf8), to: "2024/._IMG_0001.JPG")
        try source.write(Data("junk".utf8), to: "Thumbs.db")
        try source.write(jpegHeader, to: "@eaDir/IMG_0001.JPG/SYNOPHOTO_THUMB_XL.jpg")
        try source.write(Data("state".utf8), to: ".cairn-source")
        let report = try SourceScanner(root: source.path).scan()
        #expect(report.mediaFiles.map(\.relativePath) == ["2024/IMG_0001.JPG", "2024/clip.mov"])
        #expect(report.mediaFiles.map(\.kind) == [.photo, .video])
        #expect(report.otherFiles == 1)
        #expect(report.junkSkipped == 5)
        #expect(report.hasSourceMarker)
        #expect(report.isComplete)
    }

    @Test func aStreamingWalkHandsOutFilesInBatchesInWholePathOrder() throws {
        let source = try TemporaryDirectory()
        // A folder sorts as its name plus "/": "a-1.jpg" and "a.jpg" come before "a/…", "a0.jpg" after it.
        for path in ["a/b.jpg", "a/c/d.jpg", "a-1.jpg", "a.jpg", "a0.jpg", "b.jpg", "a/a.jpg", "Z.jpg", "a/c.jpg"] {
            try source.write(jpegHeader, to: path)
        }
        try source.write(Data("notes".utf8), to: "a/notes.txt")
        var batches: [[String]] = []
        let report = try SourceScanner(root: source.path).scan(batchSize: 4) { batch in
            batches.append(batch.map(\.relativePath))
        }
        let whole = try SourceScanner(root: source.path).scan()
        #expect(batches.flatMap { $0 } == whole.mediaFiles.map(\.relativePath))
        #expect(batches.map(\.count) == [4, 4, 1])
        #expect(report.mediaFiles.isEmpty)
        #expect(report.mediaCount == 9)
        #expect(report.mediaBytes == Int64(9 * jpegHeader.count))
        #expect(report.otherFiles == 1)
    }

    /// The walk's order is the bytewise order of the paths' UTF-8, the catalog's: a decomposed "é" (e and a
    /// combining accent) sorts with the e's, where `String`'s `<` (by canonical equivalence) puts it after "f".
    @Test func theWalkHandsOutPathsInTheOrderOfTheirBytes() throws {
        let source = try TemporaryDirectory()
        let decomposed = "e\u{301}.jpg", names = ["f.jpg", "d.jpg", "e\u{301}/a.jpg", "é.jpg", "e.jpg"]
        for name in names + [decomposed] { try source.write(jpegHeader, to: name) }
        var walked: [[UInt8]] = []
        _ = try SourceScanner(root: source.path).scan(batchSize: 2) { walked += $0.map { Array($0.relativePath.utf8) } }
        let bytewise = (names + [decomposed]).map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(walked == bytewise)
        #expect(walked.firstIndex(of: Array(decomposed.utf8))! < walked.firstIndex(of: Array("f.jpg".utf8))!)
        #expect(!("e\u{301}.jpg" < "f.jpg"))  // what a sort by `String` would have done
    }

    /// A streaming walk hands sidecars over in batches too, and keeps none of them.
    @Test func aStreamingWalkHandsSidecarsOverInBatches() throws {
        let source = try TemporaryDirectory()
        for index in 0..<3 {
            try source.write(jpegHeader, to: "d\(index % 2)/IMG_\(index).jpg")
            try source.write(Data("{}".utf8), to: "d\(index % 2)/IMG_\(index).jpg.json")
            try source.write(Data("<x/>".utf8), to: "d\(index % 2)/IMG_\(index).xmp")
        }
        var sidecarBatches: [[String]] = []
        var media = 0
        let report = try SourceScanner(root: source.path).scan(
            batchSize: 4, media: { media += $0.count }, sidecars: { sidecarBatches.append($0.map(\.relativePath)) })
        let whole = try SourceScanner(root: source.path).scan()
        #expect(Set(sidecarBatches.flatMap { $0 }) == Set(whole.sidecarFiles.map(\.relativePath)))
        #expect(sidecarBatches.flatMap { $0 }.count == 6)
        #expect(sidecarBatches.allSatisfy { $0.count <= 4 + 2 }, "a batch is handed over once a folder passes the size")
        #expect(report.sidecarFiles.isEmpty)
        #expect(report.sidecarCount == 6 && whole.sidecarCount == 6)
        #expect(media == 3)
    }

    @Test func aSinkThatFailsEndsTheWalkWithItsReason() throws {
        struct Full: Error, CustomStringConvertible { var description: String { "disk full" } }
        let source = try TemporaryDirectory()
        for index in 0..<5 { try source.write(jpegHeader, to: "f\(index).jpg") }
        var calls = 0
        #expect(throws: ScanError.sinkFailed("disk full")) {
            try SourceScanner(root: source.path).scan(batchSize: 2) { _ in
                calls += 1
                throw Full()
            }
        }
        #expect(calls == 1)
    }

    @Test func recordsFingerprintsFromStat() throws {
        let source = try TemporaryDirectory()
        let path = try source.write(Data(count: 1234), to: "a.jpg")
        let report = try SourceScanner(root: source.path).scan()
        let file = try #require(report.mediaFiles.first)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(file.fingerprint.size == 1234)
        #expect(file.fingerprint.inode == (attributes[.systemFileNumber] as? NSNumber)?.uint64Value)
        #expect(file.fingerprint.modificationTimeNanoseconds > 0)
    }

    @Test func symbolicLinksAreNeverFollowed() throws {
        let outside = try TemporaryDirectory()
        try outside.write(jpegHeader, to: "secret.jpg")
        try outside.write(jpegHeader, to: "folder/deep.jpg")
        let source = try TemporaryDirectory()
        try source.write(jpegHeader, to: "real.jpg")
        try FileManager.default.createSymbolicLink(atPath: source.subpath("escape.jpg"), withDestinationPath: outside.subpath("secret.jpg"))
        try FileManager.default.createSymbolicLink(atPath: source.subpath("escape-dir"), withDestinationPath: outside.subpath("folder"))
        let report = try SourceScanner(root: source.path).scan()
        #expect(report.mediaFiles.map(\.relativePath) == ["real.jpg"])
        #expect(report.symlinksSkipped == ["escape-dir", "escape.jpg"])
    }

    @Test func extensionlessMediaIsRecognisedByItsBytes() throws {
        let source = try TemporaryDirectory()
        try source.write(jpegHeader, to: "DCIM0001")
        try source.write(Data([0, 0, 0, 0x18]) + Data("ftypmp42".utf8) + Data(count: 8), to: "VID0001")
        try source.write(Data("plain text".utf8), to: "README")
        let report = try SourceScanner(root: source.path).scan()
        #expect(report.mediaFiles.map(\.relativePath) == ["DCIM0001", "VID0001"])
        #expect(report.mediaFiles.map(\.kind) == [.photo, .video])
        #expect(report.otherFiles == 1)
    }

    @Test func excludedDirectoryIsNotEntered() throws {
        let source = try TemporaryDirectory()
        try source.write(jpegHeader, to: "photos/a.jpg")
        try source.write(jpegHeader, to: "library/originals/ab/cd/x.jpg")
        let library = try #require(SourceScanner.DirectoryIdentity(path: source.subpath("library")))
        let report = try SourceScanner(root: source.path, excludedDirectories: [library]).scan()
        #expect(report.mediaFiles.map(\.relativePath) == ["photos/a.jpg"])
    }

    @Test(.enabled(if: getuid() != 0, "root reads a mode-000 folder, so the case cannot be built as root"))
    func unreadableFolderIsAnIssueNotAFailure() throws {
        let source = try TemporaryDirectory()
        try source.write(jpegHeader, to: "ok/a.jpg")
        try source.write(jpegHeader, to: "locked/b.jpg")
        chmod(source.subpath("locked"), 0)
        defer { chmod(source.subpath("locked"), 0o755) }
        let report = try SourceScanner(root: source.path).scan()
        #expect(report.mediaFiles.map(\.relativePath) == ["ok/a.jpg"])
        #expect(report.issues.map(\.relativePath) == ["locked"])
    }

    @Test func missingRootAndFileRootAreTypedErrors() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: ScanError.rootMissing(directory.subpath("gone"))) {
            try SourceScanner(root: directory.subpath("gone")).scan()
        }
        let file = try directory.write(Data("x".utf8), to: "file")
        #expect(throws: ScanError.rootNotDirectory(file)) { try SourceScanner(root: file).scan() }
    }

    @Test func classifierKnowsCommonFormats() {
        #expect(MediaClassifier.kind(forExtension: "HEIC") == .photo)
        #expect(MediaClassifier.kind(forExtension: "MP4") == .video)
        #expect(MediaClassifier.kind(forExtension: "txt") == .other)
        #expect(MediaClassifier.kind(forHeader: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A]) == .photo)
        #expect(MediaClassifier.kind(forHeader: [0, 0, 0, 0x18] + Array("ftypheic".utf8)) == .photo)
        #expect(MediaClassifier.kind(forHeader: [0, 0, 0, 0x18] + Array("ftypisom".utf8)) == .video)
        #expect(MediaClassifier.kind(forHeader: Array("hello world".utf8)) == nil)
        #expect(MediaClassifier.fileExtension(of: ".hidden") == "")
        #expect(MediaClassifier.fileExtension(of: "a.tar.gz") == "gz")
    }
}

@Suite struct SidecarMatcherTests {
    let media = ["DCIM/IMG_0001.JPG", "DCIM/IMG_0001.MOV", "DCIM/IMG_0002.HEIC", "Takeout/IMG_0003.jpg",
                 "Takeout/IMG_0003(1).jpg", "Takeout/Beach day.jpg", "Takeout/PXL_20240101.jpg", "Other/IMG_0001.JPG"]

    @Test(arguments: [
        ("DCIM/IMG_0001.xmp", "DCIM/IMG_0001.JPG"),  // base name: the still, not the Live Photo's movie
        ("DCIM/IMG_0001.JPG.xmp", "DCIM/IMG_0001.JPG"),
        ("DCIM/IMG_0002.AAE", "DCIM/IMG_0002.HEIC"),
        ("Takeout/IMG_0003.jpg.json", "Takeout/IMG_0003.jpg"),
        ("Takeout/IMG_0003.jpg.supplemental-metadata.json", "Takeout/IMG_0003.jpg"),
        ("Takeout/IMG_0003.jpg.supplemental-metad.json", "Takeout/IMG_0003.jpg"),
        ("Takeout/IMG_0003.jpg.métadonnées.json", "Takeout/IMG_0003.jpg"),
        ("Takeout/IMG_0003.jpg(1).json", "Takeout/IMG_0003(1).jpg"),
    ])
    func findsTheMediaASidecarDescribes(sidecar: String, expected: String) {
        #expect(SidecarMatcher.media(for: sidecar, among: media) == expected)
    }

    @Test func takeoutTitlesThatDifferFromTheFileNameAndNoneAcrossFolders() {
        #expect(SidecarMatcher.media(for: "Takeout/renamed.json", among: media, title: "Beach day.jpg") == "Takeout/Beach day.jpg")
        #expect(SidecarMatcher.media(for: "Takeout/unknown.json", among: media, title: "nowhere.jpg") == nil)
        #expect(SidecarMatcher.media(for: "Elsewhere/IMG_0001.xmp", among: media) == nil)
        #expect(SidecarMatcher.isSidecar(name: "IMG.XMP") && SidecarMatcher.isSidecar(name: "x.json"))
        #expect(!SidecarMatcher.isSidecar(name: "notes.txt"))
    }

    /// An album's metadata file is told by its content whatever its name; a photo's own JSON never is one.
    @Test func takeoutAlbumMetadataIsToldByContent() throws {
        let current = try #require(TakeoutAlbumMetadata(data: Data(#"{"title": "Paris", "description": "", "date": {"timestamp": "1560000000"}}"#.utf8)))
        #expect(current.title == "Paris" && current.description == nil && current.date == Date(timeIntervalSince1970: 1_560_000_000))
        let older = try #require(TakeoutAlbumMetadata(data: Data(#"{"albumData": {"title": "", "description": "Old"}}"#.utf8)))
        #expect(older.name(folderName: "Vacances") == "Vacances" && older.description == "Old")
        #expect(TakeoutAlbumMetadata(data: Data(#"{"title": "IMG_1.jpg", "photoTakenTime": {"timestamp": "1"}}"#.utf8)) == nil)
        #expect(TakeoutAlbumMetadata(data: Data("[1, 2]".utf8)) == nil)
        #expect(TakeoutAlbumMetadata.isCandidate(name: "métadonnées.json") && TakeoutAlbumMetadata.isCandidate(name: "Metadaten.JSON"))
        #expect(!TakeoutAlbumMetadata.isCandidate(name: "IMG_1.jpg.json"))
    }
}
