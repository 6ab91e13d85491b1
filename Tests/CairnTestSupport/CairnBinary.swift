import Foundation

/// The `cairn` executable built beside the test bundle, for tests that run it as a real process.
public enum CairnBinary {
    public static var path: String {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the bundle is a file in the products folder; elsewhere it may be nested deeper.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("cairn").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return testBinary.deletingLastPathComponent().appendingPathComponent("cairn").path
    }

    public struct Result {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    /// Runs `cairn` with `arguments` and waits for it.
    public static func run(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { _, new in new }
        process.environment = merged
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Drain both pipes concurrently so a chatty child never blocks on a full pipe.
        let errorData = ErrorDrain(err.fileHandleForReading)
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, standardOutput: String(decoding: output, as: UTF8.self),
                      standardError: String(decoding: errorData.wait(), as: UTF8.self))
    }
}

private final class ErrorDrain: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
