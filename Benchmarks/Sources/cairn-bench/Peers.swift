import Foundation

/// Runs peer tools and times them, for side-by-side comparisons.
enum Peers {
    struct Failure: Error, CustomStringConvertible {
        let command: String
        let message: String
        var description: String { "\(command): \(message)" }
    }

    /// Runs a command to completion; returns stdout; throws with stderr on failure.
    @discardableResult
    static func run(_ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        // Children inherit the spawning thread's signal mask, and Dispatch threads block signals: a peer that
        // times itself with SIGALRM (`openssl speed`) would never stop. perl clears the mask, then execs the peer.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/perl")
        process.arguments = ["-MPOSIX", "-e",
                             "sigprocmask(SIG_SETMASK, POSIX::SigSet->new); $SIG{$_} = 'DEFAULT' for keys %SIG; exec { $ARGV[0] } @ARGV or die \"$ARGV[0]: $!\\n\"",
                             ] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inPipe = Pipe()
        if input != nil { process.standardInput = inPipe }
        try process.run()
        if let input {
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try inPipe.fileHandleForWriting.close()
        }
        let errData = DrainInBackground(err.fileHandleForReading)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(command: arguments.prefix(3).joined(separator: " "),
                          message: String(decoding: errData.wait(), as: UTF8.self))
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func available(_ tool: String) -> Bool {
        (try? run(["sh", "-c", "command -v \(tool)"])) != nil
    }

    /// Wall-clock seconds of `body`.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The best of `repeats` timings: the least disturbed by the machine's other work.
    static func best(of repeats: Int, _ body: () throws -> Void) rethrows -> Double {
        var times: [Double] = []
        for _ in 0..<max(1, repeats) { times.append(try time(body)) }
        return times.min()!
    }

    /// Reads every file once so later timings measure page-cached data.
    static func warm(_ files: [String]) {
        for file in files { _ = FileManager.default.contents(atPath: file) }
    }

    /// Regular files below `root`, sorted.
    static func files(in root: String, extensions: Set<String>? = nil) -> [String] {
        var result: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            let path = root + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            if let extensions, !extensions.contains((relative as NSString).pathExtension.lowercased()) { continue }
            result.append(path)
        }
        return result.sorted()
    }

    static func totalBytes(_ files: [String]) -> Int64 {
        files.reduce(0) { total, path in
            total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0)
        }
    }

    /// Peak resident memory of this process so far, in MiB (VmHWM).
    static func peakResidentMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kib = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
            return kib / 1024
        }
        return 0
    }
}

private final class DrainInBackground: @unchecked Sendable {
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

/// A small aligned table for benchmark output.
struct Table {
    var header: [String]
    var rows: [[String]] = []

    func render() -> String {
        let widths = header.indices.map { column in
            ([header[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
        }
        return ([line(header), line(widths.map { String(repeating: "-", count: $0) })] + rows.map(line)).joined(separator: "\n")
    }
}

func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
