import Foundation

/// Runs a command-line tool for test set-up (making media with the `ffmpeg` CLI, comparing with `sha1sum`).
/// The product never spawns tools; tests and benchmarks may.
public enum ExternalTool {
    /// The package's folder (its `scripts/` and `.build/`), from where this file is.
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    public struct Failure: Error, CustomStringConvertible {
        public let command: [String]
        public let status: Int32
        public let standardError: String
        public var description: String { "\(command.joined(separator: " ")) exited \(status): \(standardError)" }
    }

    /// Runs `arguments[0]` found on PATH; returns standard output; throws on a non-zero exit.
    @discardableResult
    public static func run(_ arguments: [String], in directory: String? = nil, input: Data? = nil) throws -> Data {
        let finished = try ChildProcess.run(executable: "/usr/bin/env", arguments: arguments, directory: directory, input: input)
        guard finished.status == 0 else {
            throw Failure(command: arguments, status: finished.status,
                          standardError: String(decoding: finished.standardError, as: UTF8.self))
        }
        return finished.standardOutput
    }

    /// Makes media with the `ffmpeg` CLI, quietly, overwriting `output`.
    public static func ffmpeg(_ arguments: [String]) throws {
        try run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y"] + arguments)
    }
}
