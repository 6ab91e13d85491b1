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
}
