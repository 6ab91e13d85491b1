import CairnTesting
import Foundation
import Testing

/// Issue 65, item 3: a HEIC and its JPEG, and a burst's frames, become stacks showing the JPEG or the first
/// frame: in the library (`ls` one line per stack, `asset` its members) and in Immich (`POST /stacks`, once).
@Suite struct StackTests {
    /// A five-frame burst (one camera, a fifth of a second apart), an iPhone's two-frame burst (its MakerNote's burst
    /// identifier; 3 s apart, too far for the time rule), a HEIC beside its JPEG, and a lone photo.
    static func writeShots(in source: String) throws {
        try writeLaterFrames(in: source, frames: 0..<5)
        try FileManager.default.createDirectory(atPath: source + "/burst", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: source + "/pair", withIntermediateDirectories: true)
        var shot = ExifFields()
        shot.dateTimeOriginal = "2019:03:02 08:00:00"
        try MediaFixtures.jpegWithExif(at: source + "/pair/IMG_2000.JPG", width: 240, exif: shot)
        try StillFixtures.heif(from: source + "/pair/IMG_2000.JPG", at: source + "/pair/IMG_2000.HEIC")
        try FileManager.default.createDirectory(atPath: source + "/apple", withIntermediateDirectories: true)
        for frame in 0..<2 {
            var exif = ExifFields()
            exif.dateTimeOriginal = "2022:08:01 09:00:0\(3 * frame)"
            exif.appleBurstIdentifier = "6C1B2E6A-0E4B-4E61-9C3A-0F3E1B2C3D4E"
            try MediaFixtures.jpegWithExif(at: source + "/apple/IMG_500\(frame + 1).JPG", width: 280 + 2 * frame, exif: exif)
        }
        shot.dateTimeOriginal = "2015:01:01 12:00:00"
        try MediaFixtures.jpegWithExif(at: source + "/LONE.jpg", width: 260, exif: shot)
    }

    /// Frames of the burst, a fifth of a second apart from 10:00:00.1 (frames 5 and 6 are a later run's).
    static func writeLaterFrames(in source: String, frames: Range<Int>) throws {
        try FileManager.default.createDirectory(atPath: source + "/burst", withIntermediateDirectories: true)
        for frame in frames {
            var exif = ExifFields()
            exif.dateTimeOriginal = "2021:06:01 10:00:0\((100 + 200 * frame) / 1000)"
            exif.subSecTimeOriginal = String((100 + 200 * frame) % 1000)
            try MediaFixtures.jpegWithExif(at: source + "/burst/DSC_010\(frame).JPG", width: 200 + 2 * frame, exif: exif)
        }
    }

    @Test func stacksAreOneLineInTheLibraryAndOffKeepsPhotosApart() throws {
        let folder = try TemporaryDirectory()
        let source = folder.subpath("src"), library = folder.subpath("lib")
        try Self.writeShots(in: source)
        let first = try CairnBinary.run(["import", source, "--library", library, "--plain", "--clips", "off"])
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        #expect(first.standardOutput.contains("stacked 9 photos in 3 stacks"), "\(first.standardOutput)")

        let listed = try CairnBinary.run(["ls", "--library", library, "--json"])
        let lines = TakeoutFactsTests.jsonLines(listed.standardOutput)
        #expect(TakeoutFactsTests.names(listed.standardOutput) == ["DSC_0100.JPG", "IMG_2000.JPG", "IMG_5001.JPG", "LONE.jpg"],
                "\(listed.standardOutput)")
        func line(_ name: String) throws -> [String: Any] {
            try #require(lines.first { ($0["firstSourcePath"] as? String)?.hasSuffix(name) == true })
        }
        let burst = try #require(try line("DSC_0100.JPG")["stack"] as? [String])
        let burstPrimary = try line("DSC_0100.JPG")["sha1"] as? String
        #expect(burst.count == 5 && burst.first == burstPrimary)
        let pair = try #require(try line("IMG_2000.JPG")["stack"] as? [String])
        let pairPrimary = try line("IMG_2000.JPG")["sha1"] as? String
        #expect(pair.count == 2 && pair.first == pairPrimary)
        #expect(try line("LONE.jpg")["stack"] == nil)
        #expect((try line("IMG_5001.JPG")["stack"] as? [String])?.count == 2)
        let probe = try CairnBinary.run(["probe", "--json", source + "/apple/IMG_5002.JPG"])
        #expect(probe.standardOutput.contains(#""burstIdentifier":"6C1B2E6A-0E4B-4E61-9C3A-0F3E1B2C3D4E""#), "\(probe.standardOutput)")
        let text = try CairnBinary.run(["ls", "--library", library])
        #expect(text.standardOutput.contains("[stack of 5]") && text.standardOutput.contains("[stack of 2]"), "\(text.standardOutput)")

        let heic = try CairnBinary.run(["asset", source + "/pair/IMG_2000.HEIC", "--library", library])
        #expect(heic.standardOutput.contains("stack      one of 2, shown: \(pair[0]) (by heic+jpeg)"), "\(heic.standardOutput)")
        let cover = try CairnBinary.run(["asset", source + "/burst/DSC_0100.JPG", "--library", library])
        #expect(cover.standardOutput.contains("stack      shown, with 4 more (by burst time)"), "\(cover.standardOutput)")
        #expect(cover.standardOutput.contains("  member   \(burst[4])"), "\(cover.standardOutput)")

        // Nothing new: nothing stacked again.
        let again = try CairnBinary.run(["import", source, "--library", library, "--plain", "--clips", "off"])
        #expect(again.status == 0 && !again.standardOutput.contains("stacked"), "\(again.standardOutput)")

        // Two more frames of the burst in a later run: the stack grows, no second one is made.
        try Self.writeLaterFrames(in: source, frames: 5..<7)
        let later = try CairnBinary.run(["import", source, "--library", library, "--plain", "--clips", "off"])
        #expect(later.standardOutput.contains("stacked 7 photos in 1 stack "), "\(later.standardOutput)")
        let grown = TakeoutFactsTests.jsonLines(try CairnBinary.run(["ls", "--library", library, "--json"]).standardOutput)
        let grownBurst = grown.first { ($0["firstSourcePath"] as? String)?.hasSuffix("DSC_0100.JPG") == true }
        #expect((grownBurst?["stack"] as? [String])?.count == 7 && (grownBurst?["stack"] as? [String])?.prefix(5) == burst[...],
                "\(grown)")
        #expect(grown.count == 4, "\(grown)")

        let apart = folder.subpath("apart")
        let off = try CairnBinary.run(["import", source, "--library", apart, "--plain", "--clips", "off", "--stacks", "off"])
        #expect(off.status == 0 && !off.standardOutput.contains("stacked"), "\(off.standardOutput)")
        let all = try CairnBinary.run(["ls", "--library", apart, "--json"])
        #expect(TakeoutFactsTests.jsonLines(all.standardOutput).count == 12, "\(all.standardOutput)")
        let bad = try CairnBinary.run(["import", source, "--library", apart, "--stacks", "maybe"])
        #expect(bad.status == 64, "\(bad.standardError)")

        // The shown frame deleted at the source and trashed: the others are listed again, each on its line.
        func sync() throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", source, "--library", library, "--plain", "--clips", "off", "--apply-deletions",
                                 "--quarantine-days", "0"])
        }
        #expect(try sync().status == 0)  // a sync sees the source once before it trashes anything
        try FileManager.default.removeItem(atPath: source + "/burst/DSC_0100.JPG")
        for _ in 0..<2 {  // the first sync confirms the deletion, the second trashes it
            let trashed = try sync()
            #expect(trashed.status == 0, "\(trashed.standardOutput)\(trashed.standardError)")
        }
        let after = TakeoutFactsTests.names(try CairnBinary.run(["ls", "--library", library, "--json"]).standardOutput)
        #expect(after == ["DSC_0101.JPG", "DSC_0102.JPG", "DSC_0103.JPG", "DSC_0104.JPG", "DSC_0105.JPG", "DSC_0106.JPG",
                          "IMG_2000.JPG", "IMG_5001.JPG", "LONE.jpg"], "\(after)")
        let member = try CairnBinary.run(["asset", source + "/burst/DSC_0101.JPG", "--library", library])
        #expect(member.standardOutput.contains("stack      on its own while the one shown, \(burst[0]), is in the trash (by burst time)"),
                "\(member.standardOutput)")
        let memberJSON = try CairnBinary.run(["asset", source + "/burst/DSC_0101.JPG", "--library", library, "--json"])
        #expect(memberJSON.standardOutput.contains(#""stackPrimaryTrashed":"\#(burst[0])""#)
                && !memberJSON.standardOutput.contains(#""stack":["#), "\(memberJSON.standardOutput)")
    }

    @Test func stacksAreMadeInImmichOnceWithThePrimaryFirst() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        try Self.writeShots(in: fixture.source)
        let first = try fixture.sync()
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        #expect(first.standardOutput.contains("3 stacks made in Immich"), "\(first.standardOutput)")
        let assets = try await fixture.double.state().assets
        func asset(_ name: String) throws -> ImmichDouble.State.Asset {
            try #require(assets.first { $0.originalFileName == name })
        }
        let cover = try asset("DSC_0100.JPG")
        let burstStack = try #require(cover.stackId)
        #expect(cover.stackPrimaryAssetId == cover.id)
        for frame in 1..<5 { #expect(try asset("DSC_010\(frame).JPG").stackId == burstStack) }
        let jpeg = try asset("IMG_2000.JPG"), heic = try asset("IMG_2000.HEIC")
        #expect(heic.stackId != nil && heic.stackId == jpeg.stackId && heic.stackPrimaryAssetId == jpeg.id, "\(heic)")
        #expect(try asset("LONE.jpg").stackId == nil)
        #expect(try asset("IMG_5002.JPG").stackPrimaryAssetId == (try asset("IMG_5001.JPG").id))

        // Made once: a second run sends no stack again (the server would make a new one, with a new id).
        let second = try fixture.sync()
        #expect(second.status == 0 && !second.standardOutput.contains("made in Immich"), "\(second.standardOutput)")
        #expect(try await fixture.double.state().assets.first { $0.originalFileName == "DSC_0100.JPG" }?.stackId == burstStack)

        // Two more frames in a later run: the stack is made again with all seven, the first frame still first; the
        // server folds the old stack (its primary is among the ids) into the new one.
        try Self.writeLaterFrames(in: fixture.source, frames: 5..<7)
        let third = try fixture.sync()
        #expect(third.status == 0 && third.standardOutput.contains("1 stack made in Immich"), "\(third.standardOutput)")
        let grown = try await fixture.double.state().assets.filter { $0.originalFileName.hasPrefix("DSC_") }
        #expect(grown.count == 7 && Set(grown.map(\.stackId)).count == 1, "\(grown)")
        #expect(grown.allSatisfy { $0.stackPrimaryAssetId == cover.id && $0.stackId != nil && $0.stackId != burstStack })
    }

    /// A key that may not make stacks: said, not failed; the stacks wait in the catalog for a key that may.
    @Test func aKeyWithoutStackCreateSaysSoAndTheStacksWait() async throws {
        let fixture = try ImmichDestinationTests.Fixture(keyPermissions: [
            ImmichDestinationTests.key: ["user.read", "asset.upload", "asset.update", "asset.read"],
        ])
        try Self.writeShots(in: fixture.source)
        let first = try fixture.cairn(["import", fixture.source, "--plain", "--clips", "off"])
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        #expect(first.standardOutput.contains("3 stacks not made in Immich: the API key lacks stack.create"), "\(first.standardOutput)")
        #expect(try await fixture.double.state().assets.count == 10)
        #expect(try await fixture.double.state().assets.allSatisfy { $0.stackId == nil })
        let second = try fixture.cairn(["import", fixture.source, "--plain", "--clips", "off"])
        #expect(second.status == 0 && second.standardOutput.contains("3 stacks not made in Immich"), "\(second.standardOutput)")
    }
}
