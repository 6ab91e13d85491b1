import Foundation

/// Runs a command-line tool for test set-up (making media with the `ffmpeg` CLI, comparing with `sha1sum`).
/// The product never spawns tools; tests and benchmarks may.
public enum ExternalTool {
    public struct Failure: Error, CustomStringConvertible {
        public let command: [String]
        public let status: Int32
        public let standardError: String
        public var description: String { "\(command.joined(separator: " ")) exited \(status): \(standardError)" }
    }

    /// Runs `arguments[0]` found on PATH; returns standard output; throws on a non-zero exit.
    @discardableResult
    public static func run(_ arguments: [String], in directory: String? = nil, input: Data? = nil) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inputPipe = Pipe()
        if input != nil { process.standardInput = inputPipe }
        try process.run()
        if let input {
            inputPipe.fileHandleForWriting.write(input)
            try inputPipe.fileHandleForWriting.close()
        }
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(command: arguments, status: process.terminationStatus,
                          standardError: String(decoding: errors, as: UTF8.self))
        }
        return output
    }

    /// Makes media with the `ffmpeg` CLI, quietly, overwriting `output`.
    public static func ffmpeg(_ arguments: [String]) throws {
        try run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y"] + arguments)
    }
}
