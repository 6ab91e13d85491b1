import CairnTesting
import Foundation
import Testing

/// `cairn probe`, `thumbnail` and `synthesize` as scripts use them: like sha1sum, a file that failed makes the
/// command fail (hardening issue, fault 10), and the good files are still done.
@Suite struct MediaCommandTests {
    @Test func aFailedFileMakesProbeAndThumbnailExitThreeAndTheRestIsStillDone() throws {
        let folder = try TemporaryDirectory()
        let good = try MediaFixtures.jpeg(at: folder.subpath("good.jpg"), width: 320, height: 240)
        let junk = try MediaFixtures.garbage(at: folder.subpath("junk.jpg"))
        try FileManager.default.createDirectory(atPath: folder.subpath("out"), withIntermediateDirectories: true)

        let thumbnail = try CairnBinary.run(["thumbnail", good, junk, "--output", folder.subpath("out")])
        #expect(thumbnail.status == 3, "\(thumbnail.standardOutput)\(thumbnail.standardError)")
        #expect(thumbnail.standardError.contains("junk.jpg"))
        #expect(thumbnail.standardError.contains("1 of 2 files failed"))
        #expect(FileManager.default.fileExists(atPath: folder.subpath("out/good-thumb.webp"))
            || FileManager.default.fileExists(atPath: folder.subpath("out/good-thumb.jpg")))

        let probe = try CairnBinary.run(["probe", good, junk, "--json"])
        #expect(probe.status == 3)
        let lines = probe.standardOutput.split(separator: "\n")
        #expect(lines.count == 2 && lines[1].contains("\"error\""))

        let allGood = try CairnBinary.run(["probe", good])
        #expect(allGood.status == 0)

        let synthesize = try CairnBinary.run(["synthesize", junk, "--output", folder.subpath("out/clip.mp4")])
        #expect(synthesize.status != 0)
    }

    @Test func twoFilesWithOneStemKeepBothThumbnails() throws {
        let folder = try TemporaryDirectory()
        let jpeg = try MediaFixtures.jpeg(at: folder.subpath("IMG_1.jpg"), width: 320, height: 240)
        let png = folder.subpath("IMG_1.png")
        try ExternalTool.ffmpeg(["-i", jpeg, png])
        try FileManager.default.createDirectory(atPath: folder.subpath("out"), withIntermediateDirectories: true)
        let result = try CairnBinary.run(["thumbnail", jpeg, png, "--output", folder.subpath("out")])
        #expect(result.status == 0)
        let written = try FileManager.default.contentsOfDirectory(atPath: folder.subpath("out"))
        #expect(written.count == 2, "\(written)")
    }

    /// Issue 30.3: the files run through the import's lanes, several at once, yet the lines come in the files'
    /// order. The first file is the largest, so it is likely the last decoded.
    @Test func thumbnailLinesComeInTheFilesOrderWhateverFinishesFirst() throws {
        let folder = try TemporaryDirectory()
        var files = [try MediaFixtures.jpeg(at: folder.subpath("big.jpg"), width: 3000, height: 2000)]
        for index in 0..<5 {
            files.append(try MediaFixtures.jpeg(at: folder.subpath("small\(index).jpg"), width: 320, height: 240))
        }
        files.insert(try MediaFixtures.garbage(at: folder.subpath("junk.jpg")), at: 3)
        try FileManager.default.createDirectory(atPath: folder.subpath("out"), withIntermediateDirectories: true)
        let result = try CairnBinary.run(["thumbnail"] + files + ["--output", folder.subpath("out")])
        #expect(result.status == 3)
        let printed = result.standardOutput.split(separator: "\n").map { String($0.prefix { $0 != ":" }) }
        #expect(printed == files.filter { !$0.hasSuffix("junk.jpg") }, "\(result.standardOutput)")
        #expect(result.standardError.contains("junk.jpg") && result.standardError.contains("1 of 7 files failed"))
    }

    /// libavformat and libavcodec (and the libraries Debian's FFmpeg links them to), libheif and libjxl are loaded
    /// only when a file needs them: a JPEG thumbnail starts without them; a video loads FFmpeg's, a HEIF libheif, a
    /// JPEG XL libjxl, and each still gets its thumbnail.
    @Test func ffmpegIsLoadedOnlyForFilesThatNeedIt() throws {
        let folder = try TemporaryDirectory()
        let jpeg = try MediaFixtures.jpeg(at: folder.subpath("still.jpg"), width: 320, height: 240)
        let video = try MediaFixtures.video(at: folder.subpath("clip.mp4"), seconds: 1)
        try FileManager.default.createDirectory(atPath: folder.subpath("out"), withIntermediateDirectories: true)
        let trace = ["LD_DEBUG": "files"]  // the dynamic loader names every library it opens, on stderr
        let still = try CairnBinary.run(["thumbnail", jpeg, "--output", folder.subpath("out")], environment: trace)
        #expect(still.status == 0 && still.standardError.contains("libswscale"))
        #expect(!still.standardError.contains("libavcodec") && !still.standardError.contains("libavformat"))
        #expect(!still.standardError.contains("libheif") && !still.standardError.contains("libjxl"))
        #expect(!still.standardError.contains("libde265") && !still.standardError.contains("libhwy"))
        let clip = try CairnBinary.run(["thumbnail", video, "--output", folder.subpath("out")], environment: trace)
        #expect(clip.status == 0 && clip.standardError.contains("libavcodec") && clip.standardError.contains("libavformat"))
        #expect(FileManager.default.fileExists(atPath: folder.subpath("out/clip-thumb.webp")))
        for (name, library) in [("sony-a7iv-irot-first.hif", "libheif"), ("nikon-d1x-reagan.jxl", "libjxl")] {
            let picture = try CairnBinary.run(["thumbnail", StillFixtures.committed(name), "--output", folder.subpath("out")],
                                              environment: trace)
            #expect(picture.status == 0 && picture.standardError.contains(library), "\(name)")
            #expect(!picture.standardError.contains("libavformat"), "\(name)")
        }
        #expect(FileManager.default.fileExists(atPath: folder.subpath("out/sony-a7iv-irot-first-thumb.webp")))
        #expect(FileManager.default.fileExists(atPath: folder.subpath("out/nikon-d1x-reagan-thumb.webp")))
    }
}

/// Issue 11, "kept without preview": media cairn recognises but cannot render is kept byte-identical, counted
/// on its own line, and does not make the run fail; damaged media still does.
@Suite struct KeptWithoutPreviewTests {
    /// Among many photos (its transfer's asset row still waiting for a group commit when its metadata phase finds it
    /// cannot be rendered), the reason travels with the item's move and reaches the asset: `cairn asset` shows it.
    /// Adds the metadata-only DNG to `folder`'s `src/` as `IMG_0001.DNG` and imports `src/` into `lib/`, plain.
    func importWithMetadataOnlyRaw(_ folder: TemporaryDirectory)
        throws -> (result: CairnBinary.Result, library: String, raw: String, hex: String) {
        let raw = StillFixtures.committed("canon-350d-metadata-only.dng")
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: raw, toPath: folder.subpath("src/IMG_0001.DNG"))
        let library = folder.subpath("lib")
        let result = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain"])
        let hex = String(String(decoding: try ExternalTool.run(["sha1sum", raw]), as: UTF8.self).prefix(40))
        return (result, library, raw, hex)
    }

    @Test func theReasonReachesTheAssetInAnImportUnderLoad() throws {
        let folder = try TemporaryDirectory()
        for index in 0..<120 {
            try folder.write(DistinctJPEG.data(byteCount: 40_000, seed: UInt8(index)), to: "src/p\(index).jpg")
        }
        let (result, library, _, hex) = try importWithMetadataOnlyRaw(folder)
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("kept         1 without preview"))
        let asset = try CairnBinary.run(["asset", hex, "--library", library])
        #expect(asset.status == 0, "\(asset.standardError)")
        #expect(asset.standardOutput.contains("kept without preview ("), "\(asset.standardOutput)")
        let json = try CairnBinary.run(["asset", hex, "--library", library, "--json"])
        #expect(json.standardOutput.contains("\"keptWithoutPreview\""), "\(json.standardOutput)")
    }

    @Test func aMetadataOnlyRawIsKeptWithoutPreviewAndTheRunExitsZero() throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        try MediaFixtures.jpeg(at: folder.subpath("src/good.jpg"), width: 320, height: 240)
        let (result, library, raw, hex) = try importWithMetadataOnlyRaw(folder)
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("kept         1 without preview"))
        #expect(result.standardOutput.contains("kept without preview: IMG_0001.DNG: "))
        #expect(result.standardOutput.contains("failed       0"))

        let original = "\(library)/originals/\(hex.prefix(2))/\(hex).dng"
        #expect(try Data(contentsOf: URL(fileURLWithPath: original)) == Data(contentsOf: URL(fileURLWithPath: raw)))

        let status = try CairnBinary.run(["status", "--library", library])
        #expect(status.standardOutput.contains("1 kept without preview"), "\(status.standardOutput)")

        // NDJSON: the run's end carries the counter, with its stable name.
        let log = try FileManager.default.contentsOfDirectory(atPath: library + "/runs").first { $0.hasSuffix(".ndjson") }
        let lines = try String(contentsOfFile: library + "/runs/" + (log ?? ""), encoding: .utf8).split(separator: "\n")
        let end = try #require(lines.last { $0.contains("\"runEnd\"") })
        #expect(end.contains("\"keptWithoutPreview\":1"))

        // A damaged JPEG is not "kept without preview": it still fails, and the run says so.
        try MediaFixtures.garbage(at: folder.subpath("src/broken.jpg"))
        let again = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain"])
        #expect(again.status == 3)
        #expect(again.standardOutput.contains("failed: broken.jpg"))
    }
}
