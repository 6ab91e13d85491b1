import Foundation

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
