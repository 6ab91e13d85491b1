import Foundation

/// The `cairn` executable built beside the test bundle, for tests that run it as a real process.
public enum CairnBinary {
    public static var path: String { product("cairn") }

    /// An executable product built beside the test bundle (`cairn`, `cairn-fuzz`).
    public static func product(_ name: String) -> String {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the bundle is a file in the products folder; elsewhere it may be nested deeper.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return testBinary.deletingLastPathComponent().appendingPathComponent(name).path
    }

    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    /// Runs `cairn` (or another executable `product`) with `arguments` and waits for it.
    public static func run(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil,
                           product: String = "cairn") throws -> Result {
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { _, new in new }
        let finished = try ChildProcess.run(executable: Self.product(product), arguments: arguments, environment: merged,
                                            directory: directory)
        return Result(status: finished.status, standardOutput: String(decoding: finished.standardOutput, as: UTF8.self),
                      standardError: String(decoding: finished.standardError, as: UTF8.self))
    }
}
