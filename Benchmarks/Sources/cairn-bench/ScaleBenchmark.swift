import ArgumentParser
import CairnCore
import CairnLibrary
import CairnNarration
import CairnPipeline
import CairnWorker
import Foundation

/// `cairn-bench scale`: cairn at many files on one machine. For each size, in one run and on the same page-cached
/// folder: cairn's first import (thumbnails and previews, clips off), its rescan, an archive-only first import
/// (`--derivatives off`), and `rsync -a --fsync`, `rsync -a`, `cp -r` and `sha1sum` (one per core).
///
/// Each cairn run is a child process of its own, so its peak RSS (VmHWM) is its own. Outputs go to fresh folders
/// and are deleted only at the end: ext4 scans recently freed inodes when it allocates, so deleting a big tree
/// just before a run slows the run that follows, whichever tool it is.
struct ScaleBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale",
        abstract: "First import, rescan and archive-only import of N small JPEGs vs rsync, cp and sha1sum; peak RSS.")

    @Option(name: .customLong("files"), parsing: .upToNextOption,
            help: "Folder sizes to measure (generated small JPEGs in folders of 1,000), e.g. 10000 100000.")
    var files: [Int] = [10_000]

    @Option(help: "Use this folder instead of generating one (its size is then what it holds).")
    var corpus: String?

    @Option(help: "A folder for generated corpora, libraries and copies (emptied of outputs at the end).")
    var work: String

    @Option(help: "Cores for cairn's hashing and lanes, and for the parallel sha1sum.")
    var cores: Int = ProcessInfo.processInfo.activeProcessorCount

    @Flag(name: .customLong("cairn-archive-only"),
          help: "Measure only cairn: an archive-only first import and its unchanged rescan (for a million files, where the peers and derivatives would take an hour).")
    var cairnArchiveOnly = false

    @Option(name: .customLong("child-import"), help: .hidden)
    var childImport: String?
    @Option(name: .customLong("child-library"), help: .hidden)
    var childLibrary: String?
    @Flag(name: .customLong("child-archive-only"), help: .hidden)
    var childArchiveOnly = false

    func validate() throws {
        guard files.allSatisfy({ (1...1_000_000).contains($0) }) else { throw ValidationError("--files: 1 to 1,000,000") }
        if childImport == nil, !cairnArchiveOnly {
            for tool in ["rsync", "sha1sum", "xargs"] where !Peers.available(tool) {
                throw ValidationError("\(tool) is missing (scripts/ensure-packages --with-benchmark-peers)")
            }
        }
    }

    func run() async throws {
        if let childImport, let childLibrary { return try await importInChild(source: childImport, library: childLibrary) }
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let sizes: [(label: String, folder: String)] = try corpus.map { [("\(Peers.files(in: $0).count)", $0)] }
            ?? files.map { ("\($0)", try SmallJPEGCorpus.make(count: $0, work: work)) }
        var outputs: [String] = []
        defer { for output in outputs { try? FileManager.default.removeItem(atPath: output) } }
        var table = Table(header: ["files", "contender", "seconds", "vs rsync -a --fsync", "peak RSS MiB", "phases (s)"])
        for (label, folder) in sizes {
            let stamp = UUID().uuidString.prefix(8)
            func output(_ name: String) -> String {
                let path = work + "/out-\(stamp)-\(name)"
                outputs.append(path)
                return path
            }
            Peers.warm(Peers.files(in: folder))
            if cairnArchiveOnly {
                let library = output("archive")
                let archive = try child(folder, library: library, archiveOnly: true)
                let rescan = try child(folder, library: library, archiveOnly: true)
                table.rows.append([label, "cairn import --derivatives off", format(archive.seconds, 2), "",
                                   format(archive.rss, 1), archive.phases])
                table.rows.append([label, "cairn rescan (unchanged)", format(rescan.seconds, 2), "", format(rescan.rss, 1),
                                   rescan.phases])
                continue
            }
            let rsyncFsync = try timed { try Peers.run(["rsync", "-a", "--fsync", folder + "/", output("rsync-fsync")]) }
            let rsync = try timed { try Peers.run(["rsync", "-a", folder + "/", output("rsync")]) }
            let copy = try timed { try Peers.run(["cp", "-r", folder, output("cp")]) }
            let hashing = try timed {
                try Peers.run(["sh", "-c", "find \"$0\" -type f -print0 | xargs -0 -P \(cores) -n 512 sha1sum > /dev/null", folder])
            }
            let library = output("library")
            let first = try child(folder, library: library, archiveOnly: false)
            let rescan = try child(folder, library: library, archiveOnly: false)
            let archive = try child(folder, library: output("archive"), archiveOnly: true)
            func row(_ name: String, _ seconds: Double, rss: Double? = nil, phases: String = "") -> [String] {
                [label, name, format(seconds, 2), format(seconds / rsyncFsync, 2) + "x", rss.map { format($0, 1) } ?? "", phases]
            }
            table.rows.append(row("cairn import (previews, clips off)", first.seconds, rss: first.rss, phases: first.phases))
            table.rows.append(row("cairn import --derivatives off", archive.seconds, rss: archive.rss, phases: archive.phases))
            table.rows.append(row("cairn rescan (unchanged)", rescan.seconds, rss: rescan.rss))
            table.rows.append(row("rsync -a --fsync", rsyncFsync))
            table.rows.append(row("rsync -a", rsync))
            table.rows.append(row("cp -r", copy))
            table.rows.append(row("sha1sum x\(cores)", hashing))
        }
        print(table.render())
    }

    /// Seconds of `body`, after `sync` so the run starts with no one else's dirty pages to write.
    func timed(_ body: () throws -> Void) throws -> Double {
        try Peers.run(["sync"])
        return try Peers.time(body)
    }

    struct ChildResult {
        var seconds: Double
        var rss: Double
        var phases: String
    }

    /// One import in a child process; its wall time, peak RSS and per-phase times.
    func child(_ source: String, library: String, archiveOnly: Bool) throws -> ChildResult {
        let benchmark = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var arguments = [benchmark, "scale", "--work", work, "--cores", String(cores), "--child-import", source,
                         "--child-library", library]
        if archiveOnly { arguments.append("--child-archive-only") }
        var output = ""
        let seconds = try timed { output = try Peers.run(arguments) }
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("RSS ") }),
              let rss = Double(line.dropFirst(4)) else { throw ValidationError("the child said: \(output)") }
        let phases = output.split(separator: "\n").filter { $0.hasPrefix("PHASE ") }.map { $0.dropFirst(6) }
            .joined(separator: ", ")
        return ChildResult(seconds: seconds, rss: rss, phases: phases)
    }

    /// In the child: one import, as `cairn import` runs it; then its phases and this process's peak RSS.
    func importInChild(source: String, library: String) async throws {
        var options = ImportOptions(source: source)
        options.hashWorkers = cores
        options.pipeline = PipelineConfiguration.defaults(cores: cores)
        options.pipeline.clipsEnabled = false
        options.pipeline.derivativesEnabled = !childArchiveOnly
        let narration = InMemoryNarrationHandler(keepsEvents: true)
        let summary = try await ImportRun(library: try Library(root: library), options: options, output: narration).run()
        guard summary.failures.isEmpty else { throw ValidationError("failures: \(summary.failures.prefix(3))") }
        for event in narration.events where event.kind == .phaseEnd {
            if let phase = event.phase, let seconds = event.durationSeconds { print("PHASE \(phase.rawValue) \(format(seconds, 2))") }
        }
        print("RSS \(Peers.peakResidentMiB())")
    }
}

/// Distinct small valid JPEGs (one 96x64 picture, a numbered comment each) in folders of 1,000, made once.
enum SmallJPEGCorpus {
    static func make(count: Int, work: String) throws -> String {
        let folder = work + "/rss-\(count)"
        if FileManager.default.fileExists(atPath: folder) { return folder }
        let template = work + "/rss-template.jpg"
        try Peers.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "gradients=s=96x64:seed=5", "-frames:v", "1",
                       "-q:v", "5", template])
        let picture = try Data(contentsOf: URL(fileURLWithPath: template))
        let partial = folder + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        for index in 0..<count {
            let subfolder = partial + String(format: "/%03d", index / 1000)
            if index % 1000 == 0 { try FileManager.default.createDirectory(atPath: subfolder, withIntermediateDirectories: true) }
            let comment = Array("cairn rss corpus file \(index)".utf8)
            var data = Data(picture.prefix(2))
            data.append(contentsOf: [0xFF, 0xFE, UInt8((comment.count + 2) >> 8), UInt8((comment.count + 2) & 0xFF)])
            data.append(contentsOf: comment)
            data.append(picture.dropFirst(2))
            try data.write(to: URL(fileURLWithPath: subfolder + String(format: "/IMG_%06d.jpg", index)))
        }
        try FileManager.default.moveItem(atPath: partial, toPath: folder)
        return folder
    }
}
