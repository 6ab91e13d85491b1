import CairnTape
import Foundation

/// What a tape build tells as it goes, for the command line's live view, plain lines and NDJSON.
public enum TapeNews: Sendable, Equatable {
    /// The selection is known: `clips` in all, `toMake` of them not on disk from an earlier build.
    case started(name: String, clips: Int, toMake: Int, playlist: String)
    /// A segment joined the playlist; the tape now lasts `tapeSeconds`.
    case segment(clip: Int, index: Int, durationSeconds: Double, tapeSeconds: Double)
    /// A clip is on the playlist in full.
    case clipReady(clip: Int, path: String, how: TapeClipOrigin, clipsReady: Int, clips: Int)
    /// A clip is left out (or cut short after some of its segments were on the playlist), and why.
    case clipSkipped(clip: Int, path: String, reason: String, cutShort: Bool)
    /// The tape can be played: its first clips are ready (see `TapeReadiness`).
    case playable(clipsReady: Int, clips: Int, tapeSeconds: Double)
    case finished(TapeBuildReport)
}

/// A finished build: what it made, reused and left out, and where the files are.
public struct TapeBuildReport: Sendable, Equatable, Codable {
    public struct Skipped: Sendable, Equatable, Codable {
        public var path: String
        public var reason: String
        public var cutShort: Bool
    }

    public var name: String
    public var clips: Int
    /// Clips encoded by this build; `reused`: found on disk, made by an earlier build of any tape.
    public var encoded: Int
    public var reused: Int
    public var skipped: [Skipped]
    public var seconds: Double
    public var playlist: String
    /// The single file, or nil when it could not be made (`movieError` says why; the playlist stands).
    public var movie: String?
    public var movieError: String?
}
