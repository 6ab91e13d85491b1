import Foundation

/// Shared plumbing for the media benchmarks: corpus listing, lanes, peer processes, timing, RSS, tables.
enum MediaBench {
    static let stillExtensions: Set<String> = ["jpg", "jpeg"]
    static let mediaExtensions: Set<String> = ["jpg", "jpeg", "png", "heic", "mp4", "mov", "m4v", "webp", "gif", "tif", "tiff"]

    /// Regular files under `folder` (recursively) whose extension is in `extensions`, sorted.
    static func files(in folder: String, extensions: Set<String>) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        var result: [String] = []
        for case let relative as String in walker where extensions.contains((relative as NSString).pathExtension.lowercased()) {
            result.append(folder + "/" + relative)
        }
        return result.sorted()
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Seconds `body` takes.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return now() - start
    }

    /// Runs `body` on every item with `lanes` threads pulling from a shared index; returns failures.
    static func inLanes<T>(_ items: [T], lanes: Int, _ body: @escaping (T) throws -> Void) -> [String] {
        let shared = LaneState()
        let group = DispatchGroup()
        for _ in 0..<max(1, lanes) {
            group.enter()
            let thread = Thread {
                while true {
                    shared.lock.lock()
                    let index = shared.next
                    shared.next += 1
                    shared.lock.unlock()
                    guard index < items.count else { break }
                    do { try body(items[index]) } catch {
                        shared.lock.lock(); shared.failures.append("\(error)"); shared.lock.unlock()
                    }
                }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        return shared.failures
    }

    /// The next item's index and the failures so far, shared by the lanes under a lock.
    final class LaneState: @unchecked Sendable {
        let lock = NSLock()
        var next = 0
        var failures: [String] = []
    }

    /// Runs a peer command to completion, output discarded; throws on a non-zero exit.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PeerFailure(description: "\(arguments.prefix(3).joined(separator: " ")) ... exited \(process.terminationStatus)")
        }
    }

    /// Runs a peer and returns its standard output.
    static func output(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }

    struct PeerFailure: Error, CustomStringConvertible { let description: String }

    /// Whether `tool` is on PATH (peers that are missing are reported, not fatal).
    static func available(_ tool: String) -> Bool {
        (try? run(["sh", "-c", "command -v \(tool)"])) != nil
    }

    /// The real ImageMagick `convert` (a stand-in earlier on PATH may only print a notice).
    static func imageMagickConvert() -> String? {
        for candidate in ["/usr/bin/convert", "convert"] {
            if let text = try? output([candidate, "-version"]), String(decoding: text, as: UTF8.self).contains("ImageMagick 6")
                || String(decoding: text, as: UTF8.self).contains("ImageMagick 7") {
                return candidate
            }
        }
        return nil
    }

    /// `VmHWM` (peak resident set) or `VmRSS` of this process, in bytes.
    static func memory(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return digits * 1024
        }
        return 0
    }

    /// Resets the peak-RSS watermark so the next phase is measured alone (Linux >= 4.0).
    static func resetPeakRSS() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    static func scratch(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "cairn-bench-\(name)-\(getpid())"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func stem(_ path: String) -> String { ((path as NSString).lastPathComponent as NSString).deletingPathExtension }

    /// CPU seconds (user + system) used so far by this process and by its waited-for children.
    static func cpuSeconds() -> Double {
        func seconds(_ who: Int32) -> Double {
            var usage = rusage()
            getrusage(who, &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
                + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        }
        return seconds(RUSAGE_SELF.rawValue) + seconds(RUSAGE_CHILDREN.rawValue)
    }

    /// One tool in a comparison: a name and one full pass over the files.
    struct Contender {
        var name: String
        var note: () -> String = { "" }
        var pass: () -> Void
    }

    /// Runs every contender `rounds` times, interleaved (so background load hits all alike), keeping
    /// each one's fastest wall time and its CPU time in that round.
    static func compare(_ contenders: [Contender], rounds: Int, items: Int) -> [Row] {
        var best = [(wall: Double, cpu: Double)](repeating: (.infinity, .infinity), count: contenders.count)
        for _ in 0..<max(1, rounds) {
            for (index, contender) in contenders.enumerated() {
                let cpu = cpuSeconds()
                let wall = time(contender.pass)
                if wall < best[index].wall { best[index] = (wall, cpuSeconds() - cpu) }
            }
        }
        return zip(contenders, best).map { contender, best in
            Row(name: contender.name, seconds: best.wall, cpuSeconds: best.cpu, items: items, note: contender.note())
        }
    }

    /// One row of a results table.
    struct Row {
        var name: String
        var seconds: Double
        var cpuSeconds: Double? = nil
        var items: Int
        var note = ""
    }

    /// Prints rows with throughput and how many times faster the first (cairn) row is than each other row,
    /// by wall time and by CPU time.
    static func printTable(_ title: String, _ rows: [Row], unit: String = "files") {
        print("\n\(title)")
        print(String(repeating: "-", count: 110))
        print(pad("tool", 50) + pad("wall s", 8) + pad("cpu s", 8) + pad("\(unit)/s", 9) + pad("cairn x", 9)
              + pad("cpu x", 8) + "note")
        guard let base = rows.first else { return }
        for row in rows {
            let rate = Double(row.items) / row.seconds
            let isBase = row.name == base.name
            let cpuRatio = row.cpuSeconds.flatMap { cpu in base.cpuSeconds.map { cpu / $0 } }
            print(pad(row.name, 50) + pad(String(format: "%.2f", row.seconds), 8)
                  + pad(row.cpuSeconds.map { String(format: "%.2f", $0) } ?? "-", 8) + pad(String(format: "%.1f", rate), 9)
                  + pad(isBase ? "-" : String(format: "%.2fx", row.seconds / base.seconds), 9)
                  + pad(isBase || cpuRatio == nil ? "-" : String(format: "%.2fx", cpuRatio!), 8) + row.note)
        }
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
