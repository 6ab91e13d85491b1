import CairnCore
@testable import CairnTape
import Testing

@Suite("Tape clip keys and format")
struct TapeClipKeyTests {
    static let sha1 = "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    static let key = TapeClipKey(contentSHA1: sha1, kind: .still, trim: TapeClipTrim(maxSeconds: 3, kenBurns: true))

    @Test func theStandardFormatIsNamedByEveryField() {
        #expect(TapeFormat.standard.identity == "h264-1920x1080p30-yuv420p-aac48000x2-gop60-td4-v1")
        #expect(TapeFormat.standard.segmentSeconds == 2)
        #expect(TapeFormat.standard.targetDurationSeconds == 4)
        #expect(TapeFormat(audioChannels: 1).identity != TapeFormat.standard.identity)
        #expect(TapeFormat(pixelFormat: "yuv444p").identity != TapeFormat.standard.identity)
        #expect(TapeFormat(revision: 2).identity != TapeFormat.standard.identity)
    }

    /// FNV-1a 64 itself, against its published test vectors.
    @Test func fnv1a64MatchesItsReferenceValues() {
        #expect(FNV1a64.hex(of: "") == "cbf29ce484222325")
        #expect(FNV1a64.hex(of: "a") == "af63dc4c8601ec8c")
    }

    /// The expected name was computed outside Swift, with Python implementing the same FNV-1a 64:
    ///   h = 0xcbf29ce484222325; for b in text.encode(): h = ((h ^ b) * 0x100000001b3) % 2**64; "%016x" % h
    /// A change here renames every clip folder (and re-encodes every tape): only with a format revision.
    @Test func aKnownClipHasAKnownFolderName() {
        #expect(Self.key.canonicalText
            == "tape-clip-v1|da39a3ee5e6b4b0d3255bfef95601890afd80709|still|max3000ms|kenburns1|h264-1920x1080p30-yuv420p-aac48000x2-gop60-td4-v1")
        #expect(Self.key.folderName == "b85da6f33a961642")
        let upper = TapeClipKey(contentSHA1: Self.sha1.uppercased(), kind: .still, trim: TapeClipTrim(maxSeconds: 3, kenBurns: true))
        #expect(upper.folderName == Self.key.folderName, "the SHA1's case does not matter")
    }

    @Test func anyChangeOfWhatAClipIsMadeOfChangesItsFolder() {
        let trim = TapeClipTrim(maxSeconds: 3, kenBurns: true)
        let variants = [
            TapeClipKey(contentSHA1: "da39a3ee5e6b4b0d3255bfef95601890afd80708", kind: .still, trim: trim),
            TapeClipKey(contentSHA1: Self.sha1, kind: .video, trim: trim),
            TapeClipKey(contentSHA1: Self.sha1, kind: .livePhotoMotion, trim: trim),
            TapeClipKey(contentSHA1: Self.sha1, kind: .motionPhotoVideo, trim: trim),
            TapeClipKey(contentSHA1: Self.sha1, kind: .still, trim: TapeClipTrim(maxSeconds: 3.5, kenBurns: true)),
            TapeClipKey(contentSHA1: Self.sha1, kind: .still, trim: TapeClipTrim(maxSeconds: 3, kenBurns: false)),
            TapeClipKey(contentSHA1: Self.sha1, kind: .still, trim: trim, format: TapeFormat(framesPerSecond: 25, keyframeInterval: 50)),
        ]
        let names = Set(variants.map(\.folderName) + [Self.key.folderName])
        #expect(names.count == variants.count + 1)
        #expect(names.allSatisfy { $0.count == 16 && $0.allSatisfy(\.isHexDigit) })
    }

    @Test func kenBurnsCountsOnlyForStills() {
        let on = TapeClipKey(contentSHA1: Self.sha1, kind: .video, trim: TapeClipTrim(maxSeconds: 6, kenBurns: true))
        let off = TapeClipKey(contentSHA1: Self.sha1, kind: .video, trim: TapeClipTrim(maxSeconds: 6, kenBurns: false))
        #expect(on.folderName == off.folderName)
    }

    @Test func segmentFilesAreNumberedFromZero() {
        #expect(TapeClipFiles.initSegment == "init.mp4")
        #expect(TapeClipFiles.segment(0) == "seg-00000.m4s")
        #expect(TapeClipFiles.segment(1) == "seg-00001.m4s")
        #expect(TapeClipFiles.segment(42_017) == "seg-42017.m4s")
    }
}
