@testable import CairnTape
import Testing

/// The tape build's rules, one situation at a time: what is published when, readiness, skips.
@Suite("Tape build core")
struct TapeBuildCoreTests {
    static func core(clips: Int) -> TapeBuildCore {
        TapeBuildCore(clipURIPrefixes: (0..<clips).map { "c\($0)" })
    }

    static let header = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:0\n"
        + "#EXT-X-PLAYLIST-TYPE:EVENT\n#EXT-X-INDEPENDENT-SEGMENTS\n"

    /// Feeds one clip made of one-segment-per-duration and finished as encoded.
    static func make(_ core: inout TapeBuildCore, clip: Int, _ durations: [Double]) -> [TapeBuildEvent] {
        var events: [TapeBuildEvent] = []
        for duration in durations { events += core.segmentWritten(clip: clip, durationSeconds: duration) }
        return events + core.clipFinished(clip: clip, how: .encoded)
    }

    @Test func theFirstSegmentIsPublishedBeforeItsClipFinishes() {
        var core = Self.core(clips: 2)
        #expect(core.playlistText == Self.header)
        let events = core.segmentWritten(clip: 0, durationSeconds: 2.0)
        #expect(events == [.segmentPublished(clip: 0, index: 0, durationSeconds: 2, tapeSeconds: 2)])
        #expect(core.playlistText == Self.header + "#EXT-X-MAP:URI=\"c0/init.mp4\"\n#EXTINF:2.000,\nc0/seg-00000.m4s\n")
        #expect(!core.isFinished && !core.isPlayable)
    }

    @Test func aLaterClipWaitsForTheClipsBeforeItThenFollowsInOrder() {
        var core = Self.core(clips: 3)
        #expect(Self.make(&core, clip: 1, [2.0, 2.0]).isEmpty, "clip 1 is beyond the frontier")
        #expect(core.playlistText == Self.header)
        #expect(core.summary.encoded == 1, "finished, though not published yet")
        #expect(core.segmentWritten(clip: 0, durationSeconds: 2.0).count == 1)
        let events = core.clipFinished(clip: 0, how: .encoded)
        #expect(events == [
            .clipPublished(clip: 0, how: .encoded),
            .segmentPublished(clip: 1, index: 0, durationSeconds: 2, tapeSeconds: 4),
            .segmentPublished(clip: 1, index: 1, durationSeconds: 2, tapeSeconds: 6),
            .clipPublished(clip: 1, how: .encoded),
            .playable(clipsReady: 2, tapeSeconds: 6),
        ])
        #expect(core.frontier == 2)
        #expect(core.playlistText == Self.header
            + "#EXT-X-MAP:URI=\"c0/init.mp4\"\n#EXTINF:2.000,\nc0/seg-00000.m4s\n"
            + "#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"c1/init.mp4\"\n"
            + "#EXTINF:2.000,\nc1/seg-00000.m4s\n#EXTINF:2.000,\nc1/seg-00001.m4s\n")
    }

    /// The frontier, once it reaches a clip still being made, publishes what that clip wrote so far at once.
    @Test func theFrontierPublishesWhatItsNewClipHasWrittenSoFar() {
        var core = Self.core(clips: 2)
        _ = core.segmentWritten(clip: 1, durationSeconds: 1.25)
        let events = Self.make(&core, clip: 0, [1.0])
        #expect(events.suffix(2) == [
            .clipPublished(clip: 0, how: .encoded),
            .segmentPublished(clip: 1, index: 0, durationSeconds: 1.25, tapeSeconds: 2.25),
        ])
        #expect(core.segmentWritten(clip: 1, durationSeconds: 1.0)
            == [.segmentPublished(clip: 1, index: 1, durationSeconds: 1, tapeSeconds: 3.25)])
    }

    /// 1.5 s clips: two make 3 s, short of 6 s, so the rule waits for the whole (4.5 s) tape.
    @Test func threeShortClipsArePlayableOnlyWhenAllAreMade() {
        var core = Self.core(clips: 3)
        _ = Self.make(&core, clip: 0, [1.5])
        _ = Self.make(&core, clip: 1, [1.5])
        #expect(!core.isPlayable, "2 clips but 3 s < 6 s")
        let events = Self.make(&core, clip: 2, [1.5])
        #expect(core.isPlayable && core.isFinished)
        #expect(events.suffix(2) == [
            .playable(clipsReady: 3, tapeSeconds: 4.5),
            .finished(TapeBuildSummary(clips: 3, encoded: 3, seconds: 4.5)),
        ])
        #expect(core.playlistText.hasSuffix("c2/seg-00000.m4s\n#EXT-X-ENDLIST\n"))
    }

    /// Of five 1.5 s clips, the first four reach 6 s: the seconds, not the 2 clips, decide.
    @Test func theSecondsDecideWhenClipsAreShort() {
        var core = Self.core(clips: 5)
        for clip in 0..<3 { _ = Self.make(&core, clip: clip, [1.5]) }
        #expect(!core.isPlayable, "4.5 s")
        let events = Self.make(&core, clip: 3, [1.5])
        #expect(events.last == .playable(clipsReady: 4, tapeSeconds: 6))
        #expect(core.isPlayable && !core.isFinished)
    }

    /// One long first clip: 8 s, but the rule asks for 2 clips too.
    @Test func theClipCountDecidesWhenTheFirstClipIsLong() {
        var core = Self.core(clips: 3)
        _ = Self.make(&core, clip: 0, [2, 2, 2, 2])
        #expect(!core.isPlayable, "8 s but 1 clip")
        let events = Self.make(&core, clip: 1, [0.5])
        #expect(events.last == .playable(clipsReady: 2, tapeSeconds: 8.5))
    }

    @Test func aOneClipTapeIsPlayableWhenItsClipFinishes() {
        var core = Self.core(clips: 1)
        _ = core.segmentWritten(clip: 0, durationSeconds: 2)
        #expect(!core.isPlayable)
        let events = core.clipFinished(clip: 0, how: .copied)
        #expect(events == [
            .clipPublished(clip: 0, how: .copied),
            .playable(clipsReady: 1, tapeSeconds: 2),
            .finished(TapeBuildSummary(clips: 1, copied: 1, seconds: 2)),
        ])
    }

    @Test func aFailedClipInTheMiddleIsSkippedAndItsNeighboursJoin() {
        var core = Self.core(clips: 3)
        _ = core.segmentWritten(clip: 1, durationSeconds: 2)
        #expect(core.clipFailed(clip: 1, reason: "damaged: moov atom not found")
            == [.clipSkipped(clip: 1, reason: "damaged: moov atom not found", cutShort: false)])
        _ = Self.make(&core, clip: 2, [1.0])
        _ = Self.make(&core, clip: 0, [2.0])
        #expect(core.isFinished)
        #expect(core.playlistText == Self.header
            + "#EXT-X-MAP:URI=\"c0/init.mp4\"\n#EXTINF:2.000,\nc0/seg-00000.m4s\n"
            + "#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"c2/init.mp4\"\n#EXTINF:1.000,\nc2/seg-00000.m4s\n"
            + "#EXT-X-ENDLIST\n")
        #expect(!core.playlistText.contains("c1/"), "a failed clip beyond the frontier publishes nothing")
        let summary = core.summary
        #expect(summary.encoded == 2 && summary.skippedCount == 1 && summary.seconds == 3)
        #expect(summary.skipped == [TapeSkippedClip(clip: 1, reason: "damaged: moov atom not found", cutShort: false)])
    }

    @Test func theFrontierFailingAfterSomeSegmentsIsCutShortAndKeepsThem() {
        var core = Self.core(clips: 2)
        _ = core.segmentWritten(clip: 0, durationSeconds: 2)
        let before = core.playlistText
        #expect(core.clipFailed(clip: 0, reason: "decoder error") == [.clipSkipped(clip: 0, reason: "decoder error", cutShort: true)])
        #expect(core.playlistText == before)
        _ = Self.make(&core, clip: 1, [1.5])
        #expect(core.playlistText.hasPrefix(before + "#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"c1/init.mp4\"\n"))
        #expect(core.summary.cutShortCount == 1 && core.summary.seconds == 3.5)
        #expect(core.isPlayable, "all settled; the cut-short clip counted nothing toward readiness")
    }

    @Test func aSegmentOverTheTargetDurationFailsItsClip() {
        var core = Self.core(clips: 2)
        _ = core.segmentWritten(clip: 0, durationSeconds: 2)
        let events = core.segmentWritten(clip: 0, durationSeconds: 4.5)  // rounds to 5 > 4
        #expect(events.count == 1)
        guard case .clipSkipped(0, let reason, true) = events.first else {
            Issue.record("expected clip 0 cut short, got \(events)")
            return
        }
        #expect(reason.contains("4.500") && reason.contains("target duration"), "\(reason)")
        #expect(!core.playlistText.contains("4.500"))
        // The encoder may still be finishing that clip: its later news is ignored, not a trap.
        #expect(core.segmentWritten(clip: 0, durationSeconds: 1).isEmpty)
        #expect(core.clipFinished(clip: 0, how: .encoded).isEmpty)
        #expect(core.clipFailed(clip: 0, reason: "late").isEmpty)
        #expect(core.summary.skippedCount == 1 && core.summary.encoded == 0)
        // 4.499 s rounds to 4: accepted.
        #expect(core.segmentWritten(clip: 1, durationSeconds: 4.499).count == 1)
        #expect(core.playlistText.contains("#EXTINF:4.499,\nc1/seg-00000.m4s\n"))
    }

    @Test func aReusedClipWithAnOverLongSegmentIsRefusedWhole() {
        var core = Self.core(clips: 1)
        let events = core.clipFinished(clip: 0, how: .reused(segmentDurations: [2, 6.2]))
        #expect(events.first.map { if case .clipSkipped(0, _, false) = $0 { true } else { false } } == true, "\(events)")
        #expect(core.publishedSegmentCount == 0 && core.isFinished)
    }

    @Test func aReusedClipPublishesAllItsSegmentsAtOnce() {
        var core = Self.core(clips: 2)
        let events = core.clipFinished(clip: 0, how: .reused(segmentDurations: [2, 2, 1.2]))
        #expect(events == [
            .segmentPublished(clip: 0, index: 0, durationSeconds: 2, tapeSeconds: 2),
            .segmentPublished(clip: 0, index: 1, durationSeconds: 2, tapeSeconds: 4),
            .segmentPublished(clip: 0, index: 2, durationSeconds: 1.2, tapeSeconds: 5.2),
            .clipPublished(clip: 0, how: .reused),
        ])
        #expect(core.summary.reused == 1)
    }

    @Test func aClipFinishedWithoutSegmentsIsSkipped() {
        var core = Self.core(clips: 2)
        let events = core.clipFinished(clip: 0, how: .encoded)
        #expect(events == [.clipSkipped(clip: 0, reason: "no segment was made", cutShort: false)])
        #expect(core.frontier == 1 && core.summary.encoded == 0)
    }

    @Test func durationsAreWrittenWithThreeDecimals() {
        #expect(TapePlaylist.seconds(milliseconds: 0) == "0.000")
        #expect(TapePlaylist.seconds(milliseconds: 1_005) == "1.005")
        #expect(TapePlaylist.seconds(milliseconds: 12_340) == "12.340")
        var core = Self.core(clips: 1)
        _ = core.segmentWritten(clip: 0, durationSeconds: 1.0004)
        _ = core.segmentWritten(clip: 0, durationSeconds: 0.6666)
        #expect(core.playlistText.contains("#EXTINF:1.000,\nc0/seg-00000.m4s\n#EXTINF:0.667,\nc0/seg-00001.m4s\n"))
        #expect(TapeClipFiles.segment(123_456) == "seg-123456.m4s")
    }
}

extension TapeBuildSummary {
    var skippedCount: Int { skipped.count }
    var cutShortCount: Int { skipped.count { $0.cutShort } }
}

extension TapeBuildCore {
    var publishedSegmentCount: Int { playlist.segmentCount }
}
