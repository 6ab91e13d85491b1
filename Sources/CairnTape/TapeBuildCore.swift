import CairnCore

/// A tape build's every decision, as a value: what the shell reports of its clips goes in (a segment written, a
/// clip finished or failed), events come out, and `playlistText` is the playlist to write after each call. It does
/// no I/O and reads no clock, so every order in which clips can be made is driven in a test without a file.
///
/// Rules:
/// - the clips are known up front, in tape order (0..<count), and may be made in any order (several lanes);
/// - the playlist only grows (each version a byte prefix of the next) and holds the clips whose fate is known,
///   in order, with no hole: the first unsettled clip (the *frontier*) publishes each segment as it is written,
///   so the first one plays early; a later clip's segments wait until the frontier reaches it;
/// - a clip that fails is skipped with its reason and the tape goes on; if it was the frontier, what it already
///   published stays and it is "cut short"; a clip beyond the frontier publishes nothing. A segment longer than
///   the fixed target duration, or a clip that finishes without any segment, fails its clip the same way;
/// - the tape is playable once `readiness` holds (see `TapeReadiness`) or every clip is settled, and stays so;
/// - once every clip is settled the playlist ends (#EXT-X-ENDLIST) and `.finished` is the last event.
///
/// Misuse by the shell (a clip index out of range, news of a clip already settled, a reused clip that also
/// wrote segments) is a programmer error and traps. One exception: after the core itself has refused a clip (an
/// over-long segment), the shell may still have that clip's work in flight, so later news of it is ignored.
public struct TapeBuildCore: Sendable {
    public let format: TapeFormat
    public let readiness: TapeReadiness
    /// Per clip, its folder as the playlist reaches it, e.g. "../.clips/<folderName>".
    public let clipURIPrefixes: [String]
    public private(set) var playlist: TapePlaylist
    public private(set) var isPlayable = false
    /// The first clip not settled yet: every clip before it is on the playlist in full, cut short, or skipped.
    public private(set) var frontier = 0
    /// Clips published in full (all before the frontier), and their length: what readiness counts.
    public private(set) var readyClips = 0
    private var readyMilliseconds = 0
    private var publishedMilliseconds = 0
    private var clips: [ClipProgress]
    private var counts: TapeBuildSummary
    private var events: [TapeBuildEvent] = []

    struct ClipProgress: Sendable {
        /// The durations, in milliseconds, of the segments written so far, in order; the first `published` are
        /// on the playlist.
        var segments: [Int] = []
        var published = 0
        var fate: Fate?
    }

    enum Fate: Sendable, Equatable {
        case finished(TapeClipOrigin)
        /// `byCore`: refused by the core (the shell may not know yet).
        case failed(byCore: Bool)
    }

    /// `clipURIPrefixes`: one per clip, in tape order, without a trailing slash. A tape has at least one clip: an
    /// empty selection is the caller's to report, with no playlist to write.
    public init(clipURIPrefixes: [String], format: TapeFormat = .standard, readiness: TapeReadiness = .standard) {
        precondition(!clipURIPrefixes.isEmpty, "a tape has at least one clip")
        precondition(clipURIPrefixes.allSatisfy(TapePlaylist.isUsableURI), "a clip's URI prefix holds no quote or line break")
        self.format = format
        self.readiness = readiness
        self.clipURIPrefixes = clipURIPrefixes
        playlist = TapePlaylist(targetDurationSeconds: format.targetDurationSeconds)
        clips = Array(repeating: ClipProgress(), count: clipURIPrefixes.count)
        counts = TapeBuildSummary(clips: clipURIPrefixes.count)
    }

    // MARK: Queries

    public var clipCount: Int { clips.count }
    public var playlistText: String { playlist.text }
    /// The playlist has ended: every clip is settled.
    public var isFinished: Bool { playlist.isEnded }
    public var publishedSeconds: Double { Double(publishedMilliseconds) / 1000 }

    public var summary: TapeBuildSummary {
        var summary = counts
        summary.seconds = publishedSeconds
        return summary
    }

    // MARK: Inputs

    /// `clip`'s next segment file is complete on disk (a clip's segments come in order).
    public mutating func segmentWritten(clip: Int, durationSeconds: Double) -> [TapeBuildEvent] {
        guard acceptsNews(of: clip) else { return [] }
        switch format.checkedMilliseconds(durationSeconds) {
        case .success(let milliseconds):
            clips[clip].segments.append(milliseconds)
            if clip == frontier { publishWritten(clip) }
        case .failure(let refusal):
            fail(clip, reason: "segment \(clips[clip].segments.count) \(refusal.description)", byCore: true)
        }
        return endInput()
    }

    /// `clip` is made: its segments were each reported (`.encoded`, `.copied`) or come with this call (`.reused`).
    public mutating func clipFinished(clip: Int, how source: TapeClipSource) -> [TapeBuildEvent] {
        guard acceptsNews(of: clip) else { return [] }
        if case .reused(let durations) = source {
            precondition(clips[clip].segments.isEmpty, "clip \(clip) is reused, so none of its segments was written now")
            // Checked in full before any is published: a bad one refuses the whole clip.
            var segments: [Int] = []
            segments.reserveCapacity(durations.count)
            for (index, seconds) in durations.enumerated() {
                switch format.checkedMilliseconds(seconds) {
                case .success(let milliseconds): segments.append(milliseconds)
                case .failure(let refusal):
                    fail(clip, reason: "reused segment \(index) \(refusal.description)", byCore: true)
                    return endInput()
                }
            }
            clips[clip].segments = segments
        }
        guard !clips[clip].segments.isEmpty else {
            fail(clip, reason: "no segment was made", byCore: true)
            return endInput()
        }
        clips[clip].fate = .finished(source.origin)
        switch source.origin {
        case .encoded: counts.encoded += 1
        case .reused: counts.reused += 1
        case .copied: counts.copied += 1
        }
        return endInput()
    }

    /// `clip` could not be made; `reason` is shown with it.
    public mutating func clipFailed(clip: Int, reason: String) -> [TapeBuildEvent] {
        guard acceptsNews(of: clip) else { return [] }
        fail(clip, reason: reason, byCore: false)
        return endInput()
    }

    // MARK: Rules

    /// Whether news of `clip` is to be acted on: false only for a clip the core refused itself (see the type's
    /// comment); any other news of a settled clip traps.
    private func acceptsNews(of clip: Int) -> Bool {
        precondition(clips.indices.contains(clip), "clip \(clip) is not on a tape of \(clips.count) clips")
        if clips[clip].fate == .failed(byCore: true) { return false }
        precondition(clips[clip].fate == nil, "clip \(clip) is settled already (\(String(describing: clips[clip].fate)))")
        return true
    }

    private mutating func fail(_ clip: Int, reason: String, byCore: Bool) {
        let cutShort = clips[clip].published > 0
        clips[clip].fate = .failed(byCore: byCore)
        // Segments held beyond the frontier are dropped: a failed clip publishes nothing more.
        clips[clip].segments.removeSubrange(clips[clip].published...)
        let skipped = TapeSkippedClip(clip: clip, reason: reason, cutShort: cutShort)
        counts.skipped.append(skipped)
        events.append(.clipSkipped(clip: clip, reason: reason, cutShort: cutShort))
    }

    /// Moves the frontier past every settled clip, publishing on the way, then tells of readiness and the end.
    private mutating func endInput() -> [TapeBuildEvent] {
        while frontier < clips.count {
            publishWritten(frontier)
            guard let fate = clips[frontier].fate else { break }
            if case .finished(let origin) = fate {
                readyClips += 1
                readyMilliseconds += clips[frontier].segments.reduce(0, +)
                events.append(.clipPublished(clip: frontier, how: origin))
            }
            frontier += 1
        }
        let settled = frontier == clips.count
        if !isPlayable && (settled || readiness.holds(readyClips: readyClips, readyMilliseconds: readyMilliseconds)) {
            isPlayable = true
            events.append(.playable(clipsReady: readyClips, tapeSeconds: publishedSeconds))
        }
        if settled && !playlist.isEnded {
            playlist.end()
            events.append(.finished(summary))
        }
        defer { events = [] }
        return events
    }

    /// Publishes the segments of `clip` written and not published yet (it is the frontier).
    private mutating func publishWritten(_ clip: Int) {
        let prefix = clipURIPrefixes[clip]
        while clips[clip].published < clips[clip].segments.count {
            let index = clips[clip].published
            let milliseconds = clips[clip].segments[index]
            if index == 0 { playlist.beginClip(uriPrefix: prefix) }
            playlist.appendSegment(index: index, milliseconds: milliseconds, uriPrefix: prefix)
            publishedMilliseconds += milliseconds
            clips[clip].published += 1
            events.append(.segmentPublished(clip: clip, index: index, durationSeconds: Double(milliseconds) / 1000,
                                            tapeSeconds: publishedSeconds))
        }
    }
}
