import CairnCore
import CairnTesting
import Foundation
import Testing

/// Issue 62: the memory table's estimates against the peaks `cairn` reaches on the large fixtures, each file in a
/// process of its own; and an import under a cgroup limit that ends with nothing killed.
@Suite(.serialized) struct MemoryLimitTests {
    /// `cairn probe --json`'s estimate for `file`: (thumbnail, clip) bytes.
    static func estimate(_ file: String) throws -> (thumbnail: Int64, clip: Int64) {
        let result = try CairnBinary.run(["probe", "--json", file])
        guard result.status == 0,
              let line = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any],
              let probe = line["probe"] as? [String: Any], let memory = probe["memory"] as? [String: Any],
              let thumbnail = (memory["thumbnail"] as? NSNumber)?.int64Value, let clip = (memory["clip"] as? NSNumber)?.int64Value
        else { throw ProbeFailure(file: file, output: result.standardOutput + result.standardError) }
        return (thumbnail, clip)
    }

    struct ProbeFailure: Error { var file: String; var output: String }

    /// Each fixture's thumbnail (with its preview) and, for stills, its clip: the peak resident set of the command
    /// less that of the same command on a 64x48 file of the same format (the process's own libraries and buffers,
    /// those loaded on first use included: libheif, libjxl, FFmpeg's codecs), within 0.67 to 1.1 of the estimate the
    /// probe gives.
    /// Minutes of child processes: on the blocking pool, so the suite's other tests keep the cooperative threads.
    @Test func everyLargeFixturesMeasuredPeakIsCloseToItsEstimate() async throws {
        try await BlockingPool.run { try Self.measureEveryFixture() }
    }

    static func measureEveryFixture() throws {
        let fixtures = try LargeStills.folder()
        let work = try TemporaryDirectory()
        let cairn = CairnBinary.path
        func thumbnail(_ file: String) throws -> Int64 {
            try LargeStills.peakResidentBytes(of: [cairn, "thumbnail", file, "--preview", "--output", work.path])
        }
        func clip(_ file: String) throws -> Int64 {
            try LargeStills.peakResidentBytes(of: [cairn, "synthesize", file, "--output", work.subpath("clip.mp4")])
        }
        var lines: [String] = []
        var outside: [String] = []
        for name in LargeStills.names {
            let file = fixtures + "/" + name
            let estimate = try Self.estimate(file)
            let tiny = try LargeStills.tiny(like: name, in: work.path)
            var measures = [("thumbnail", try thumbnail(file) - (try thumbnail(tiny)), estimate.thumbnail)]
            if !name.hasSuffix(".mp4") { measures.append(("clip", try clip(file) - (try clip(tiny)), estimate.clip)) }
            for (what, peak, estimated) in measures {
                let ratio = Double(peak) / Double(estimated)
                let line = "\(name) \(what): \(peak >> 20) MiB measured, \(estimated >> 20) MiB estimated, "
                    + String(format: "%.2f", ratio)
                lines.append(line)
                if !(0.67...1.1).contains(ratio) { outside.append(line) }
            }
        }
        #expect(outside.isEmpty, "outside 0.67...1.1:\n\(outside.joined(separator: "\n"))\nall:\n\(lines.joined(separator: "\n"))")
    }

    /// Every large fixture imported with clips on inside a cgroup limited to 512 MiB (made here: v1 or v2): each
    /// file ends imported or failed with its memory reason, and the kernel killed nothing.
    @Test func anImportUnderA512MiBCgroupIsNeverKilled() async throws {
        guard let cgroup = TestCgroup(limit: 512 << 20) else {
            try Test.cancel("skipped: no memory cgroup can be made here (needs root and a v1 or v2 memory controller)")
        }
        defer { cgroup.remove() }
        try await BlockingPool.run { try Self.importInside(cgroup) }
    }

    static func importInside(_ cgroup: TestCgroup) throws {
        let fixtures = try LargeStills.folder()
        let work = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: work.subpath("source"), withIntermediateDirectories: true)
        for name in LargeStills.names {
            try FileManager.default.copyItem(atPath: fixtures + "/" + name, toPath: work.subpath("source/\(name)"))
        }
        // The shell joins the cgroup, then runs the import in it; the status is kept in a file.
        let script = """
            echo $$ > "$1/cgroup.procs" || exit 90
            out=$2; shift 2
            "$@" > "$out/run.out" 2> "$out/run.err"; echo $? > "$out/run.rc"
            """
        try ExternalTool.run(["sh", "-c", script, "sh", cgroup.folder, work.path, CairnBinary.path, "import",
                              work.subpath("source"), "--library", work.subpath("library"),
                              "--report", work.subpath("report.jsonl"), "--plain"])
        let status = try String(contentsOfFile: work.subpath("run.rc"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let errors = (try? String(contentsOfFile: work.subpath("run.err"), encoding: .utf8)) ?? ""
        #expect(cgroup.oomKills == 0, "the kernel killed a process of the import: status \(status), \(errors)")
        // 0: all imported; 3: some failed (for memory, below).
        #expect(status == "0" || status == "3", "status \(status): \(errors)")
        let report = (try? String(contentsOfFile: work.subpath("report.jsonl"), encoding: .utf8)) ?? ""
        var outcomes: [String: String] = [:]
        for line in report.split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let path = object["path"] as? String, let outcome = object["outcome"] as? String else { continue }
            let category = object["category"] as? String
            outcomes[(path as NSString).lastPathComponent] = outcome == "failed" ? "failed: \(category ?? "?")" : outcome
        }
        #expect(Set(outcomes.keys) == Set(LargeStills.names), "\(outcomes)")
        for (name, outcome) in outcomes {
            #expect(outcome == "imported" || outcome == "failed: memory", "\(name): \(outcome)")
        }
    }
}

/// A memory cgroup of its own with a limit, made under the v1 memory controller or the v2 hierarchy (whichever
/// this machine has and lets root write), removed once its processes are gone.
struct TestCgroup: Sendable {
    let folder: String
    let isV2: Bool

    init?(limit: Int64) {
        let name = "cairn-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // v1: the memory controller's own hierarchy.
        if FileManager.default.fileExists(atPath: "/sys/fs/cgroup/memory/memory.limit_in_bytes"),
           let folder = Self.make("/sys/fs/cgroup/memory/" + name, limitFile: "memory.limit_in_bytes", limit: limit) {
            self.folder = folder
            isV2 = false
            return
        }
        // v2: the unified hierarchy, with the memory controller handed down to the new cgroup.
        for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
            guard let controllers = try? String(contentsOfFile: root + "/cgroup.controllers", encoding: .utf8),
                  controllers.split(whereSeparator: \.isWhitespace).contains("memory") else { continue }
            _ = try? "+memory".write(toFile: root + "/cgroup.subtree_control", atomically: false, encoding: .utf8)
            if let folder = Self.make(root + "/" + name, limitFile: "memory.max", limit: limit) {
                self.folder = folder
                isV2 = true
                return
            }
        }
        return nil
    }

    /// The cgroup's folder with its limit written, or nil (and nothing left behind) when the kernel refuses either.
    private static func make(_ folder: String, limitFile: String, limit: Int64) -> String? {
        guard mkdir(folder, 0o755) == 0 else { return nil }
        guard (try? "\(limit)".write(toFile: folder + "/" + limitFile, atomically: false, encoding: .utf8)) != nil else {
            rmdir(folder)
            return nil
        }
        return folder
    }

    /// Processes the kernel's out-of-memory killer killed in the cgroup (v1 `memory.oom_control`, v2 `memory.events`).
    var oomKills: Int {
        let file = folder + (isV2 ? "/memory.events" : "/memory.oom_control")
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("oom_kill ") {
            return Int(line.split(separator: " ").last ?? "") ?? -1
        }
        return -1
    }

    func remove() { rmdir(folder) }
}
