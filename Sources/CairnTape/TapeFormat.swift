import CairnCore

extension TapeFormat {
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
