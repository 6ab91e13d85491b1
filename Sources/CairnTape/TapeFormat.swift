/// The one format every clip of every tape is made in, so that any clip's segments can follow any other's in one
/// playlist (a discontinuity resets timestamps, not codecs or sizes) and a clip made for one tape serves them all.
///
/// `identity` names the format in every clip's key (`TapeClipKey`): change any field, or bump `revision` when the
/// encoder's settings change in a way these fields do not show, and every clip is made again.
public struct TapeFormat: Sendable, Hashable {
    public let videoCodec: String
    public let width: Int
    public let height: Int
    public let framesPerSecond: Int
    public let pixelFormat: String
    public let audioCodec: String
    public let audioSampleRate: Int
    public let audioChannels: Int
    /// Frames from one keyframe to the next: each segment starts on a keyframe, so this sets its length.
    public let keyframeInterval: Int
    /// The playlist's #EXT-X-TARGETDURATION. The playlist is append-only, so it is fixed before the first segment
    /// and a segment longer than it (rounded to the nearest second) is refused rather than written.
    public let targetDurationSeconds: Int
    public let revision: Int

    public init(videoCodec: String = "h264", width: Int = 1920, height: Int = 1080, framesPerSecond: Int = 30,
                pixelFormat: String = "yuv420p", audioCodec: String = "aac", audioSampleRate: Int = 48_000,
                audioChannels: Int = 2, keyframeInterval: Int = 60, targetDurationSeconds: Int = 4, revision: Int = 1) {
        precondition(width > 0 && height > 0 && framesPerSecond > 0 && keyframeInterval > 0, "a tape format needs a size, a rate and a keyframe interval")
        precondition(audioSampleRate > 0 && audioChannels > 0, "a tape format needs an audio rate and channels")
        precondition(targetDurationSeconds * framesPerSecond >= keyframeInterval,
                     "the target duration must hold a whole segment")
        self.videoCodec = videoCodec
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.pixelFormat = pixelFormat
        self.audioCodec = audioCodec
        self.audioSampleRate = audioSampleRate
        self.audioChannels = audioChannels
        self.keyframeInterval = keyframeInterval
        self.targetDurationSeconds = targetDurationSeconds
        self.revision = revision
    }

    /// H.264 1080p30 yuv420p, AAC stereo 48 kHz, a keyframe (and a segment) every 2 s, target duration 4 s.
    public static let standard = TapeFormat()

    /// A segment's nominal length: a clip's last segment is shorter, and an encoder may end one a little later.
    public var segmentSeconds: Double { Double(keyframeInterval) / Double(framesPerSecond) }

    /// Every field, for instance "h264-1920x1080p30-yuv420p-aac48000x2-gop60-td4-v1".
    public var identity: String {
        "\(videoCodec)-\(width)x\(height)p\(framesPerSecond)-\(pixelFormat)-\(audioCodec)\(audioSampleRate)x\(audioChannels)"
            + "-gop\(keyframeInterval)-td\(targetDurationSeconds)-v\(revision)"
    }

    /// A segment's duration as the playlist writes it, in whole milliseconds, or why it cannot be written:
    /// not a positive finite time, or longer than the target duration once rounded to the nearest second.
    func checkedMilliseconds(_ seconds: Double) -> Result<Int, SegmentRefusal> {
        // The upper bound keeps the conversion to Int from trapping; anything that long is refused anyway.
        guard seconds.isFinite, seconds > 0, seconds < 1e9 else { return .failure(.invalid(seconds)) }
        let milliseconds = Int((seconds * 1000).rounded())
        guard milliseconds > 0 else { return .failure(.invalid(seconds)) }
        // Rounded to the nearest second (halves up) it must not exceed the target (RFC 8216, 4.3.3.1).
        guard milliseconds < targetDurationSeconds * 1000 + 500 else {
            return .failure(.overTarget(milliseconds: milliseconds, targetSeconds: targetDurationSeconds))
        }
        return .success(milliseconds)
    }
}

/// Why a segment's duration was refused.
enum SegmentRefusal: Error, Sendable, Equatable {
    case invalid(Double)
    case overTarget(milliseconds: Int, targetSeconds: Int)

    var description: String {
        switch self {
        case .invalid(let seconds): "has no usable duration (\(seconds))"
        case .overTarget(let milliseconds, let target):
            "lasts \(TapePlaylist.seconds(milliseconds: milliseconds)) s, over the playlist's target duration of \(target) s"
        }
    }
}

/// When a growing tape may start playing: once its first contiguous run of settled clips holds at least
/// `minimumClips` clips made in full and at least `minimumSeconds` of them (both), or once every clip is settled.
/// Skipped clips, cut short or not, settle the run without counting toward either.
public struct TapeReadiness: Sendable, Hashable {
    public let minimumSeconds: Double
    public let minimumClips: Int

    public init(minimumSeconds: Double = 6, minimumClips: Int = 2) {
        precondition(minimumSeconds >= 0 && minimumSeconds.isFinite && minimumClips >= 0, "readiness needs non-negative bounds")
        self.minimumSeconds = minimumSeconds
        self.minimumClips = minimumClips
    }

    /// The seeds' rule: 6 s and the first 2 clips, whichever asks more.
    public static let standard = TapeReadiness()

    /// Compared in the playlist's own milliseconds, so the rule never hinges on how a sum of Doubles rounds.
    var minimumMilliseconds: Int { Int((minimumSeconds * 1000).rounded(.up)) }

    func holds(readyClips: Int, readyMilliseconds: Int) -> Bool {
        readyClips >= minimumClips && readyMilliseconds >= minimumMilliseconds
    }
}
