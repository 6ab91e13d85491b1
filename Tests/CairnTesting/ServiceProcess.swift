import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A long-running program under test (a server, a daemon): started with its output in a log file, waited on
/// by what it prints, signalled, and stopped when the test ends.
public final class ServiceProcess: @unchecked Sendable {
    public let process = Process()
    public let logPath: String
    private let log: FileHandle

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Starts `executable` (a path, or a name looked up on PATH) with `arguments`; stdout and stderr go to `logPath`.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], logPath: String) throws {
        let resolved = executable.contains("/") ? executable : try Self.which(executable)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        self.logPath = logPath
        process.executableURL = URL(fileURLWithPath: resolved)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { _, new in new }
        process.environment = merged
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        stop()
        try? log.close()
    }

    public var pid: Int32 { process.processIdentifier }
    public var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits until the log matches `pattern` (a regular expression); returns the first match's first capture group,
    /// or the whole match when it has none.
    @discardableResult
    public func waitForOutput(matching pattern: String, timeout: TimeInterval = 30) throws -> String {
        let expression = try NSRegularExpression(pattern: pattern)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let text = output
            if let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) {
                let range = match.numberOfRanges > 1 ? match.range(at: 1) : match.range
                return Range(range, in: text).map { String(text[$0]) } ?? ""
            }
            if !process.isRunning { break }
            usleep(20_000)
        }
        throw Failure(description: "\(process.executableURL?.lastPathComponent ?? "process") never printed /\(pattern)/; "
                      + "its output:\n\(output)")
    }

    public func send(_ signal: Int32) { kill(pid, signal) }

    /// Waits for the process to exit; its exit status (128 + the signal for one killed by a signal).
    public func waitForExit(timeout: TimeInterval = 60) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        guard !process.isRunning else { throw Failure(description: "still running after \(timeout) s:\n\(output)") }
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// SIGTERM and wait; SIGKILL after `grace` seconds. A child of the test runner may start with SIGTERM blocked
    /// or ignored (a tool that does not install its own handler then never ends), and none must outlive the suite.
    public func stop(grace: TimeInterval = 10) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(grace)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now.
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Int32 in
                guard bind(descriptor, raw, length) == 0 else { return -1 }
                return getsockname(descriptor, raw, &length)
            }
        }
        guard bound == 0 else { throw Failure(description: "bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The path of `name` on PATH.
    public static func which(_ name: String) throws -> String {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        for folder in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        throw Failure(description: "\(name) is not installed (scripts/ensure-packages --with-test-tools installs it)")
    }
}

/// HTTP over loopback with the curl CLI, for tests that read what a server serves.
public enum HTTPProbe {
    public struct Answer: Sendable {
        public var status: Int
        public var body: String
    }

    public static func get(_ url: String, headers: [String] = []) throws -> Answer {
        var arguments = ["curl", "-s", "--max-time", "20", "-o", "-", "-w", "\n%{http_code}"]
        for header in headers { arguments += ["-H", header] }
        let text = String(decoding: try ExternalTool.run(arguments + [url]), as: UTF8.self)
        guard let newline = text.lastIndex(of: "\n"), let status = Int(text[text.index(after: newline)...]) else {
            throw ServiceProcess.Failure(description: "curl \(url): no status in \(text.suffix(200))")
        }
        return Answer(status: status, body: String(text[..<newline]))
    }
}
