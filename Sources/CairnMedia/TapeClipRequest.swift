import CairnCore
import Foundation

/// One source to encode as one tape clip: a folder holding `clip.m3u8`, `init.mp4` and `seg-00000.m4s`, ...
public struct TapeClipRequest: Sendable, Equatable {
    /// What the source is, and how long its clip runs.
    public enum Source: Sendable, Equatable {
        /// A video file, trimmed to `maxSeconds`.
        case video(maxSeconds: Double = 6)
        /// A still picture shown for `seconds`, with a slow zoom when `kenBurns`.
        case still(seconds: Double = 3, kenBurns: Bool = false)
    }

    /// How much of the machine the clip's encoding takes, and how hard it compresses.
    public enum Effort: Sendable, Equatable {
        /// The tape waits for this clip: x264's cheapest searches that keep the tape's one set of parameter sets
        /// (same quality target, larger files), no frame lookahead, every core for this one clip, its decoder
        /// threaded too.
        case urgent
        /// Made alongside others: x264's veryfast preset on `threads` threads (0: the encoder chooses).
        case background(threads: Int)
    }

    public var sourcePath: String
    public var source: Source
    public var settings: TapeFormat
    /// The clip's folder: complete once its `clip.m3u8` ends with #EXT-X-ENDLIST.
    public var folder: String
    public var effort: Effort

    public init(sourcePath: String, source: Source, settings: TapeFormat = .standard, folder: String,
                effort: Effort = .background(threads: 0)) {
        self.sourcePath = sourcePath
        self.source = source
        self.settings = settings
        self.folder = folder
        self.effort = effort
    }

    /// The clip's own playlist inside a clip folder.
    public static let playlistName = "clip.m3u8"
    public static let initName = "init.mp4"

    /// The segment durations of the whole clip in `folder` (its playlist ended, its init segment and every segment
    /// present), or nil when the folder holds no whole clip (none, or what a killed build left).
    public static func completedSegments(in folder: String) -> [Double]? {
        guard let data = FileManager.default.contents(atPath: folder + "/" + playlistName),
              FileManager.default.fileExists(atPath: folder + "/" + initName) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard text.contains("#EXT-X-ENDLIST") else { return nil }
        let durations = TapeMuxer.durations(in: text)
        guard !durations.isEmpty,
              durations.indices.allSatisfy({ FileManager.default.fileExists(atPath: folder + "/" + segmentName($0)) })
        else { return nil }
        return durations
    }

    /// The name of segment `index` in a clip folder ("seg-00000.m4s").
    public static func segmentName(_ index: Int) -> String {
        let digits = String(index)
        return "seg-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits + ".m4s"
    }
}
