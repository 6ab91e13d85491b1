import ArgumentParser
import CairnCore
import CairnImport
import CairnLibrary
import CairnMedia
import CairnNarration
import CairnPipeline
import Foundation

/// `cairn-bench scale`: cairn at many files on one machine. For each size, in one run and on the same page-cached
/// folder: cairn's first import (thumbnails and previews, clips off), its rescan, an archive-only first import
/// (`--derivatives off`), and `rsync -a --fsync`, `rsync -a`, `cp -r` and `sha1sum` (one per core). The peer that
/// does an import's work, copy and thumbnails, is `rsync -a --fsync` followed by `vipsthumbnail` (one process per
/// core, WebP at cairn's size and quality, beside each copy) and a sync of the copy's file system: the "x same work"
/// column compares each cairn import with the peer that does what it does.
///
/// Each cairn run is a child process of its own, so its peak RSS (VmHWM) is its own. The filesystem's state weighs
/// more than the tools: ext4 scans recently freed inodes when it allocates, so a run right after a big `rm -rf`
/// is slower, and slower for the tool that writes more files. `--state fresh` writes every output to a new
/// folder and deletes nothing until the end; `--state after-delete` deletes each contender's previous output
/// (an untimed round makes the first) right before it runs. Rounds are interleaved: each round runs every
/// contender once, so a slow spell of the disk hits all of them.
struct ScaleBenchmark: AsyncParsableCommand {
    enum FilesystemState: String, ExpressibleByArgument, CaseIterable {
        case fresh, afterDelete = "after-delete"
    }

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

    @Option(help: "Interleaved rounds: each contender runs once a round; the table gives min/median/max.")
    var rounds = 1

    @Option(help: "fresh: outputs to new folders, nothing deleted until the end; after-delete: each contender's previous output is deleted right before it runs.")
    var state: FilesystemState = .fresh

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
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
        if childImport == nil, !cairnArchiveOnly {
            for tool in ["rsync", "sha1sum", "xargs", "vipsthumbnail"] where !Peers.available(tool) {
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
        var table = Table(header: ["files", "contender", "seconds min/med/max", "x rsync -a --fsync min/med/max",
                                   "x same work min/med/max", "peak RSS MiB", "phases (s), median round"])
        // Each cairn import against the peer that does the same work: the copy alone, or the copy and thumbnails.
        let sameWork = ["cairn import --derivatives off": "rsync -a --fsync",
                        "cairn import (previews, clips off)": Self.copyAndThumbnails(cores: cores)]
        for (label, folder) in sizes {
            let stamp = UUID().uuidString.prefix(8)
            var made = 0
            func output(_ name: String) -> String {
                made += 1
                let path = work + "/out-\(stamp)-\(made)-\(name)"
                outputs.append(path)
                return path
            }
            Peers.warm(Peers.files(in: folder))
            var contenders: [Contender] = []
            if cairnArchiveOnly {
                contenders.append(.cairn("cairn import --derivatives off", archiveOnly: true, measuresRescan: true))
            } else {
                contenders.append(.peer("rsync -a --fsync") { ["rsync", "-a", "--fsync", folder + "/", $0] })
                contenders.append(.peer(Self.copyAndThumbnails(cores: cores)) {
                    Self.copyAndThumbnailsCommand(folder, $0, cores: cores)
                })
                contenders.append(.cairn("cairn import (previews, clips off)", archiveOnly: false, measuresRescan: true))
                contenders.append(.cairn("cairn import --derivatives off", archiveOnly: true, measuresRescan: false))
                contenders.append(.peer("rsync -a") { ["rsync", "-a", folder + "/", $0] })
                contenders.append(.peer("cp -r") { ["cp", "-r", folder, $0] })
            }
            var results = [String: [ChildResult]]()
            var previous = [String: String]()
            // after-delete: an untimed round makes what the first timed round deletes.
            if state == .afterDelete {
                for contender in contenders { previous[contender.name] = try run(contender, folder, output(contender.slug)).output }
            }
            for _ in 0..<rounds {
                for contender in contenders {
                    if let old = previous[contender.name] { try FileManager.default.removeItem(atPath: old) }
                    let result = try run(contender, folder, output(contender.slug))
                    results[contender.name, default: []].append(result.timed)
                    if let rescan = result.rescan { results["cairn rescan (unchanged)", default: []].append(rescan) }
                    if state == .afterDelete { previous[contender.name] = result.output }
                }
                if !cairnArchiveOnly {
                    let hashing = try timed {
                        try Peers.run(["sh", "-c", "find \"$0\" -type f -print0 | xargs -0 -P \(cores) -n 512 sha1sum > /dev/null", folder])
                    }
                    results["sha1sum x\(cores)", default: []].append(ChildResult(seconds: hashing, rss: 0, phases: ""))
                }
            }
            let base = results["rsync -a --fsync"]?.map(\.seconds)
            let names = contenders.map(\.name) + ["cairn rescan (unchanged)"] + (cairnArchiveOnly ? [] : ["sha1sum x\(cores)"])
            for name in names {
                guard let runs = results[name] else { continue }
                let seconds = runs.map(\.seconds)
                let ratios = base.map { zip(seconds, $0).map { $0 / $1 } }
                let peerRatios = sameWork[name].flatMap { results[$0] }.map { zip(seconds, $0.map(\.seconds)).map { $0 / $1 } }
                let median = runs.sorted { $0.seconds < $1.seconds }[runs.count / 2]
                let rss = runs.map(\.rss).max() ?? 0
                table.rows.append([label, name, MediaBench.spread(seconds, "%.2f"),
                                   ratios.map { MediaBench.spread($0, "%.2f") + "x" } ?? "",
                                   peerRatios.map { MediaBench.spread($0, "%.2f") + "x" } ?? "",
                                   rss > 0 ? format(rss, 1) : "", median.phases])
            }
        }
        print("state: \(state.rawValue), \(rounds) interleaved round(s), \(cores) cores")
        print(table.render())
    }

    /// One tool in the comparison: a peer command writing to a given folder, or a cairn import in a child.
    struct Contender {
        var name: String
        var slug: String
        var command: ((String) -> [String])?
        var archiveOnly = false
        var measuresRescan = false

        static func peer(_ name: String, _ command: @escaping (String) -> [String]) -> Contender {
            Contender(name: name, slug: name.filter { $0.isLetter }, command: command)
        }

        static func cairn(_ name: String, archiveOnly: Bool, measuresRescan: Bool) -> Contender {
            Contender(name: name, slug: archiveOnly ? "archive" : "library", command: nil, archiveOnly: archiveOnly,
                      measuresRescan: measuresRescan)
        }
    }

    static func copyAndThumbnails(cores: Int) -> String { "rsync -a --fsync, vipsthumbnail x\(cores), sync" }

    /// The copy, then a WebP thumbnail of each copied JPEG beside it, as cairn makes it: its short side at most
    /// cairn's (a box as tall as that, for the landscape pictures this benchmark makes; `>`: never enlarged), quality
    /// 75, one vips process per core given 500 files at a time; then a sync of the file system, as cairn's import
    /// makes its files durable.
    static func copyAndThumbnailsCommand(_ folder: String, _ destination: String, cores: Int) -> [String] {
        let side = MediaConfiguration().thumbnailShortSide
        let script = """
            rsync -a --fsync "$0/" "$1" && find "$1" -type f -name '*.jpg' -print0 \
              | VIPS_CONCURRENCY=1 xargs -0 -P "$2" -n 500 vipsthumbnail -s "100000x\(side)>" -o '%s.thumb.webp[Q=75]' \
              && sync -f "$1"
            """
        return ["sh", "-c", script, folder, destination, String(cores)]
    }

    /// Runs one contender into `destination`; for a cairn import that measures it, its unchanged rescan after.
    func run(_ contender: Contender, _ folder: String, _ destination: String) throws
        -> (output: String, timed: ChildResult, rescan: ChildResult?) {
        if let command = contender.command {
            let seconds = try timed { try Peers.run(command(destination)) }
            return (destination, ChildResult(seconds: seconds, rss: 0, phases: ""), nil)
        }
        let first = try child(folder, library: destination, archiveOnly: contender.archiveOnly)
        let rescan = contender.measuresRescan ? try child(folder, library: destination, archiveOnly: contender.archiveOnly) : nil
        return (destination, first, rescan)
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
        // The phases from the narration's state: keeping every event (several for each item) would put the
        // benchmark's own log in the child's peak RSS, which is cairn's to report.
        let narration = InMemoryNarrationHandler(keepsEvents: false)
        let summary = try await LibraryImport.run(root: library, options: options, output: narration)
        guard summary.failures.isEmpty else { throw ValidationError("failures: \(summary.failures.prefix(3))") }
        for entry in narration.state.timeline.entries {
            if let seconds = entry.durationSeconds { print("PHASE \(entry.phase.rawValue) \(format(seconds, 2))") }
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
