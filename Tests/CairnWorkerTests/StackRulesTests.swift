import CairnCatalog
import CairnCore
import Foundation
import Testing

@testable import CairnStages

/// Which shots stack, and which of them is shown (issue 65, item 3): each rule alone, and one still never in two
/// stacks.
@Suite struct StackRulesTests {
    static let moment = Date(timeIntervalSince1970: 1_700_000_000)

    static func still(_ path: String, _ seconds: Double, burst: String? = nil, camera: String? = "Cam") -> StackCandidate {
        // Distinct paths, distinct checksums: the path's bytes folded into 20.
        var bytes = [UInt8](repeating: 0, count: 20)
        for (index, byte) in path.utf8.enumerated() { bytes[index % 20] = bytes[index % 20] &* 31 &+ byte }
        return StackCandidate(checksum: Checksum(bytes: bytes)!, firstSourcePath: path,
                              captureDate: moment.addingTimeInterval(seconds), burstIdentifier: burst, cameraModel: camera)
    }

    func paths(_ stack: AssetStack, _ stills: [StackCandidate]) -> [String] {
        stack.members.map { member in stills.first { $0.checksum == member }?.firstSourcePath ?? "?" }
    }

    @Test func aRawOrHeicStacksUnderItsJpegOnlyWithinASecond() {
        let stills = [Self.still("a/IMG_1.CR2", 0), Self.still("a/IMG_1.JPG", 0.4, camera: nil),
                      Self.still("a/IMG_2.HEIC", 10), Self.still("a/img_2.jpg", 10),
                      Self.still("a/IMG_3.NEF", 20), Self.still("a/IMG_3.JPG", 22),
                      Self.still("b/IMG_1.CR2", 0.2)]
        let stacks = StackRules.stacks(among: stills, at: Self.moment)
        #expect(stacks.map { paths($0, stills) } == [["a/IMG_1.JPG", "a/IMG_1.CR2"], ["a/img_2.jpg", "a/IMG_2.HEIC"]])
        #expect(stacks.map(\.basis) == ["raw+jpeg", "heic+jpeg"])
    }

    @Test func burstsByNameTakeTheCoverAndByIdentifierTheFirstFrame() {
        let samsung = (1...4).map { Self.still("DCIM/20231207_101605_00\($0).jpg", Double($0) * 0.1, camera: nil) }
        let huawei = [Self.still("h/IMG_20231014_183246_BURST002.jpg", 0.1, camera: nil),
                      Self.still("h/IMG_20231014_183246_BURST001_COVER.jpg", 0.2, camera: nil)]
        let pixel = [Self.still("p/PXL_20231207_032111247.RAW-02.ORIGINAL.dng", 0, camera: nil),
                     Self.still("p/PXL_20231207_032111247.RAW-01.COVER.jpg", 0, camera: nil)]
        let apple = [Self.still("i/IMG_5002.HEIC", 0.2, burst: "B"), Self.still("i/IMG_5001.HEIC", 0.1, burst: "B"),
                     Self.still("i/IMG_5009.HEIC", 0.1, burst: "C")]
        let stills = samsung + huawei + pixel + apple
        let stacks = StackRules.stacks(among: stills, at: Self.moment)
        let found = Set(stacks.map { paths($0, stills) })
        #expect(found == [
            samsung.map(\.firstSourcePath),
            ["h/IMG_20231014_183246_BURST001_COVER.jpg", "h/IMG_20231014_183246_BURST002.jpg"],
            ["p/PXL_20231207_032111247.RAW-01.COVER.jpg", "p/PXL_20231207_032111247.RAW-02.ORIGINAL.dng"],
            ["i/IMG_5001.HEIC", "i/IMG_5002.HEIC"],
        ])
        #expect(Set(stacks.map(\.basis)) == ["burst name", "raw+jpeg", "burst id"])
    }

    @Test func framesCloseInTimeStackOnlyThreeOrMoreOfOneCameraInOneFolder() {
        let burst = (0..<5).map { Self.still("t/DSC_\(100 + $0).JPG", 30 + Double($0) * 0.2) }
        let apart = [Self.still("t/DSC_200.JPG", 60), Self.still("t/DSC_201.JPG", 60.3)]  // two frames: no burst
        let mixed = [Self.still("u/A.JPG", 90), Self.still("u/B.JPG", 90.2, camera: "Other"), Self.still("u/C.JPG", 90.4)]
        let slow = [Self.still("v/1.JPG", 120), Self.still("v/2.JPG", 121), Self.still("v/3.JPG", 122)]
        let stills = burst + apart + mixed + slow
        let stacks = StackRules.stacks(among: stills, at: Self.moment)
        #expect(stacks.map { paths($0, stills) } == [burst.map(\.firstSourcePath)])
        #expect(stacks.first?.basis == "burst time")
    }

    @Test func aStillIsInOneStackAtMost() {
        // A RAW+JPEG pair inside a timed burst: the pair stacks first, the burst keeps the rest.
        let stills = [Self.still("w/IMG_1.JPG", 0), Self.still("w/IMG_1.CR2", 0),
                      Self.still("w/IMG_2.JPG", 0.2), Self.still("w/IMG_3.JPG", 0.4), Self.still("w/IMG_4.JPG", 0.6)]
        let stacks = StackRules.stacks(among: stills, at: Self.moment)
        let members = stacks.flatMap(\.members)
        #expect(members.count == Set(members).count)
        #expect(stacks.map { paths($0, stills) } == [["w/IMG_1.JPG", "w/IMG_1.CR2"], ["w/IMG_2.JPG", "w/IMG_3.JPG", "w/IMG_4.JPG"]])
    }

    @Test func aLaterRunsFramesGrowTheStackOfTheFirstOnesAndNeverSplitOne() {
        // Run 1 stacked frames 0-2 of a burst; run 2 brings frames 3 and 4.
        var first = (0..<3).map { Self.still("x/DSC_\(10 + $0).JPG", Double($0) * 0.2) }
        let primary = first[0].checksum
        for index in first.indices { first[index].stackPrimary = primary }
        let later = (3..<5).map { Self.still("x/DSC_\(10 + $0).JPG", Double($0) * 0.2) }
        let grown = AssetStacking.stacks(among: first + later, at: Self.moment)
        #expect(grown.map { paths($0, first + later) } == [(first + later).map(\.firstSourcePath)])

        // Nothing new: the stack made before is not made again.
        #expect(AssetStacking.stacks(among: first, at: Self.moment).isEmpty)

        // A stack made before of a RAW+JPEG pair and the next frame: today's rules would take the pair apart from
        // that frame and make a burst of it with two new frames. That would split the stack: left out.
        var old = [Self.still("y/IMG_1.JPG", 0), Self.still("y/IMG_1.CR2", 0), Self.still("y/IMG_2.JPG", 0.2)]
        for index in old.indices { old[index].stackPrimary = old[0].checksum }
        let frames = [Self.still("y/IMG_3.JPG", 0.4), Self.still("y/IMG_4.JPG", 0.6)]
        #expect(StackRules.stacks(among: old + frames, at: Self.moment).count == 2)
        #expect(AssetStacking.stacks(among: old + frames, at: Self.moment).isEmpty)
    }

    @Test(arguments: [
        ("20231207_101605_001.jpg", "samsung 20231207_101605", 1, true),
        ("20231207_101605_003_COVER.JPG", "samsung 20231207_101605", 3, true),
        ("00015IMG_00015_BURST20171111030039_COVER.jpg", "nexus BURST20171111030039", 15, true),
        ("00001IMG_00001_BURST20171111030039.jpg", "nexus BURST20171111030039", 1, false),
        ("PXL_20231207_032108788.RAW-01.MP.COVER.jpg", "pixel PXL_20231207_032108788", 1, true),
    ])
    func burstNamesAreRead(name: String, group: String, index: Int, cover: Bool) {
        #expect(BurstName(name) == BurstName(group: group, index: index, isCover: cover))
    }

    @Test(arguments: ["IMG_1234.JPG", "20231207_101605.jpg", "PXL_20231026_210642603.jpg", "burst.jpg"])
    func ordinaryNamesAreNoBurst(name: String) {
        #expect(BurstName(name) == nil)
    }
}
