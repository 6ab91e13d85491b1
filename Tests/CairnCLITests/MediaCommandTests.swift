import CairnTestSupport
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
}
