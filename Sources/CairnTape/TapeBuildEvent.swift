/// How a finished clip's segments were made, as recorded in the manifest and the summary.
public enum TapeClipOrigin: String, Sendable, Hashable, Codable, CaseIterable {
    case encoded
    /// Found on disk, made by an earlier build (of this tape or another) under the same key.
    case reused
    /// Already in the tape format: remuxed into segments, not re-encoded.
    case copied
}

/// What the shell tells the core about a clip that finished.
public enum TapeClipSource: Sendable, Equatable {
    /// Encoded now: its segments were each reported with `segmentWritten`.
    case encoded
    /// Its segments were on disk already: all of them come with this call, their durations in order (and none
    /// was reported with `segmentWritten`).
    case reused(segmentDurations: [Double])
    /// Remuxed now: its segments were each reported with `segmentWritten`.
    case copied

    public var origin: TapeClipOrigin {
        switch self {
        case .encoded: .encoded
        case .reused: .reused
        case .copied: .copied
        }
    }
}

/// What the core tells the shell, in the order it happened. The playlist (`TapeBuildCore.playlistText`) already
/// holds everything these events announce when they are returned.
public enum TapeBuildEvent: Sendable, Equatable {
    /// Segment `index` of `clip` is on the playlist; `tapeSeconds`: the playlist's length with it.
    case segmentPublished(clip: Int, index: Int, durationSeconds: Double, tapeSeconds: Double)
    /// Every segment of `clip` is on the playlist, and every clip before it is settled.
    case clipPublished(clip: Int, how: TapeClipOrigin)
    /// `clip` failed and is left out, announced as soon as it fails. `cutShort`: it was the first unsettled clip
    /// and some of its segments were on the playlist already; they stay (the playlist only grows).
    case clipSkipped(clip: Int, reason: String, cutShort: Bool)
    /// The readiness rule holds (once per build): `clipsReady` clips made in full lead the tape; `tapeSeconds`:
    /// the playlist's length then (the next clip's first segments included).
    case playable(clipsReady: Int, tapeSeconds: Double)
    /// Every clip is settled and the playlist has ended; always the last event.
    case finished(TapeBuildSummary)
}

/// A clip left out of the tape, and why.
public struct TapeSkippedClip: Sendable, Hashable, Codable {
    public let clip: Int
    public let reason: String
    /// Some of its segments stayed on the playlist.
    public let cutShort: Bool
}

/// What a build made of its clips so far (all of them once it has finished).
public struct TapeBuildSummary: Sendable, Hashable, Codable {
    public var clips: Int
    /// Clips finished, by how their segments were made (published or still waiting for the clips before them).
    public var encoded = 0
    public var reused = 0
    public var copied = 0
    /// In the order they failed.
    public var skipped: [TapeSkippedClip] = []
    /// The playlist's length: every published segment, those of cut-short clips included.
    public var seconds: Double = 0
}
