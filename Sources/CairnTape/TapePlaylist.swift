/// The tape's HLS media playlist (fMP4 segments, an EVENT playlist), built only by appending: every version of
/// `text` is a byte prefix of the next, so a player that read an earlier version finds all of it still there.
/// What may be appended, and when, is `TapeBuildCore`'s business; this type only writes the lines.
public struct TapePlaylist: Sendable, Equatable {
    public private(set) var text: String
    public let targetDurationSeconds: Int
    /// Clips with at least one segment on the playlist.
    public private(set) var clipCount = 0
    public private(set) var segmentCount = 0
    /// #EXT-X-ENDLIST is written: nothing more may follow.
    public private(set) var isEnded = false

    public init(targetDurationSeconds: Int) {
        precondition(targetDurationSeconds > 0, "a target duration is at least 1 s")
        self.targetDurationSeconds = targetDurationSeconds
        text = Self.header(targetDurationSeconds: targetDurationSeconds)
    }

    /// Written once, first, and never changed: hence a fixed target duration and an EVENT playlist, whose segments
    /// are never removed (media sequence 0 for ever). Every segment starts on a keyframe: independent segments.
    public static func header(targetDurationSeconds: Int) -> String {
        "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:\(targetDurationSeconds)\n#EXT-X-MEDIA-SEQUENCE:0\n"
            + "#EXT-X-PLAYLIST-TYPE:EVENT\n#EXT-X-INDEPENDENT-SEGMENTS\n"
    }

    /// Starts a clip's run of segments: a discontinuity from the clip before (its timestamps start again), and
    /// its own init segment. `uriPrefix`: the clip's folder as the playlist reaches it, without a trailing slash.
    public mutating func beginClip(uriPrefix: String) {
        precondition(!isEnded, "the playlist has ended")
        precondition(Self.isUsableURI(uriPrefix), "a clip's URI prefix holds no quote or line break: \(uriPrefix)")
        if clipCount > 0 { text += "#EXT-X-DISCONTINUITY\n" }
        text += "#EXT-X-MAP:URI=\"\(uriPrefix)/\(TapeClipFiles.initSegment)\"\n"
        clipCount += 1
    }

    /// Appends the current clip's segment `index`, lasting `milliseconds` (already checked against the target).
    public mutating func appendSegment(index: Int, milliseconds: Int, uriPrefix: String) {
        precondition(!isEnded && clipCount > 0, "a segment follows its clip's init segment, before the end")
        precondition(milliseconds > 0 && milliseconds < targetDurationSeconds * 1000 + 500, "an unchecked duration")
        text += "#EXTINF:\(Self.seconds(milliseconds: milliseconds)),\n\(uriPrefix)/\(TapeClipFiles.segment(index))\n"
        segmentCount += 1
    }

    /// Every clip is settled: players stop polling for more.
    public mutating func end() {
        precondition(!isEnded, "the playlist has ended already")
        text += "#EXT-X-ENDLIST\n"
        isEnded = true
    }

    /// Seconds with exactly three decimals ("1.500"), from whole milliseconds: no locale, no float formatting.
    public static func seconds(milliseconds: Int) -> String {
        precondition(milliseconds >= 0, "a duration is not negative")
        return "\(milliseconds / 1000).\(TapeClipFiles.zeroPadded(milliseconds % 1000, width: 3))"
    }

    static func isUsableURI(_ uri: String) -> Bool {
        !uri.isEmpty && !uri.contains { $0 == "\"" || $0.isNewline }
    }
}
