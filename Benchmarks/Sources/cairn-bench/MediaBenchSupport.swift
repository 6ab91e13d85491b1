import CairnCore
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
    static func inLanes<T: Sendable>(_ items: [T], lanes: Int, _ body: @escaping @Sendable (T) throws -> Void) -> [String] {
        let shared = Locked(LaneState())
        let group = DispatchGroup()
        for _ in 0..<max(1, lanes) {
            group.enter()
            let thread = Thread {
                while true {
                    let index = shared.withLock { state in
                        defer { state.next += 1 }
                        return state.next
                    }
                    guard index < items.count else { break }
                    do { try body(items[index]) } catch {
                        shared.withLock { $0.failures.append("\(error)") }
                    }
                }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        return shared.withLock { $0.failures }
    }

    /// The next item's index and the failures so far, shared by the lanes under a lock.
    struct LaneState {
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

    /// Runs every contender `rounds` times, interleaved (so background load hits all alike), keeping every
    /// round's wall time and the CPU time of each contender's fastest round.
    static func compare(_ contenders: [Contender], rounds: Int, items: Int) -> [Row] {
        var walls = [[Double]](repeating: [], count: contenders.count)
        var cpus = [Double](repeating: 0, count: contenders.count)
        for _ in 0..<max(1, rounds) {
            for (index, contender) in contenders.enumerated() {
                let cpu = cpuSeconds()
                let wall = time(contender.pass)
                if wall < (walls[index].min() ?? .infinity) { cpus[index] = cpuSeconds() - cpu }
                walls[index].append(wall)
            }
        }
        return contenders.indices.map { index in
            Row(name: contenders[index].name, walls: walls[index], cpuSeconds: cpus[index], items: items,
                note: contenders[index].note())
        }
    }

    /// One row of a results table: a wall time per round, in the order the rounds ran.
    struct Row {
        var name: String
        var walls: [Double]
        var cpuSeconds: Double? = nil
        var items: Int
        var note = ""

        init(name: String, walls: [Double], cpuSeconds: Double? = nil, items: Int, note: String = "") {
            self.name = name
            self.walls = walls
            self.cpuSeconds = cpuSeconds
            self.items = items
            self.note = note
        }

        init(name: String, seconds: Double, cpuSeconds: Double? = nil, items: Int, note: String = "") {
            self.init(name: name, walls: [seconds], cpuSeconds: cpuSeconds, items: items, note: note)
        }

        var seconds: Double { walls.min() ?? .infinity }
    }

    /// min/median/max of `values`, formatted; one value alone when there is one.
    static func spread(_ values: [Double], _ format: String) -> String {
        let sorted = values.sorted()
        guard let first = sorted.first, let last = sorted.last, sorted.count > 1 else {
            return sorted.first.map { String(format: format, $0) } ?? "-"
        }
        return [first, sorted[sorted.count / 2], last].map { String(format: format, $0) }.joined(separator: "/")
    }

    /// Prints rows with throughput and how many times the base row's time each row takes: per round (the two
    /// ran side by side), as min/median/max over the rounds, and by CPU time in each one's fastest round.
    static func printTable(_ title: String, _ rows: [Row], unit: String = "files", base baseIndex: Int = 0) {
        print("\n\(title)")
        print(String(repeating: "-", count: 126))
        print(pad("tool", 50) + pad("wall s min/med/max", 20) + pad("cpu s", 7) + pad("\(unit)/s", 9)
              + pad("x base min/med/max", 20) + pad("cpu x", 7) + "note")
        guard rows.indices.contains(baseIndex) else { return }
        let base = rows[baseIndex]
        for (index, row) in rows.enumerated() {
            let rate = Double(row.items) / row.seconds
            let ratios = zip(row.walls, base.walls).map { $0 / $1 }
            let cpuRatio = row.cpuSeconds.flatMap { cpu in base.cpuSeconds.map { cpu / $0 } }
            print(pad(row.name, 50) + pad(spread(row.walls, "%.2f"), 20)
                  + pad(row.cpuSeconds.map { String(format: "%.2f", $0) } ?? "-", 7) + pad(String(format: "%.1f", rate), 9)
                  + pad(index == baseIndex ? "base" : spread(ratios, "%.2f") + "x", 20)
                  + pad(index == baseIndex || cpuRatio == nil ? "-" : String(format: "%.2fx", cpuRatio!), 7) + row.note)
        }
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
