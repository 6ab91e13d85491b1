import ArgumentParser
import CairnCore
import CairnImport
import CairnLibrary
import CairnMedia
import CairnPipeline
import Foundation

/// `cairn-bench import`: a whole `cairn import` (scan, hash, the four lanes, catalog) against a shell pipeline
/// doing the same work per file on the same cores, in one run; and the peak RSS of importing 1,000 vs 10,000
/// files, each in its own child process.
struct ImportBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "End-to-end import vs a shell pipeline (sha1sum, cp, ffprobe, ffmpeg); peak RSS at 1,000 vs 10,000 files.")

    @Option(help: "A media corpus to take files from (e.g. made by `cairn-bench corpus`).")
    var corpus: String?

    @Option(help: "How many stills to import (taken from the corpus, in path order).")
    var stills = 58

    @Option(help: "How many videos to import besides.")
    var videos = 2

    @Option(help: "A folder for the working copies, scratch libraries and RSS corpora (never the source corpus).")
    var work: String

    @Option(help: "The cores every contender gets (cairn's lane defaults; the shell's parallel processes).")
    var cores: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("rss-files"), parsing: .upToNextOption,
            help: "File counts for the peak-RSS comparison (small generated JPEGs, clips off), e.g. 1000 10000.")
    var rssFiles: [Int] = []

    @Option(name: .customLong("lanes"), parsing: .upToNextOption,
            help: "Lane specs to time beside the defaults, e.g. thumbnail=1 synthesis=2 (one cairn import each).")
    var laneSpecs: [String] = []

    @Flag(name: .customLong("no-shell"), help: "Time only cairn (to compare lane settings), not the shell pipeline.")
    var noShell = false

    @Option(name: .customLong("rss-child"), help: .hidden)
    var rssChild: String?

    func validate() throws {
        guard cores > 0, stills >= 0, videos >= 0 else { throw ValidationError("--cores, --stills and --videos must be positive.") }
        if rssChild == nil, corpus == nil, rssFiles.isEmpty { throw ValidationError("Give --corpus and/or --rss-files.") }
        for spec in laneSpecs {
            do { _ = try PipelineConfiguration.defaults(cores: cores).applying(laneSpec: spec) } catch {
                throw ValidationError("--lanes \(spec): \(error.description)")
            }
        }
    }

    func run() async throws {
        if let rssChild { return try await importForPeakRSS(source: rssChild) }
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        if let corpus { try await compareWithShell(corpus: corpus) }
        if !rssFiles.isEmpty { try compareResidentMemory() }
    }

    // MARK: cairn vs a shell pipeline

    func compareWithShell(corpus: String) async throws {
        let source = try workingCopy(of: corpus)
        let files = Peers.files(in: source)
        let bytes = Peers.totalBytes(files)
        Peers.warm(files)
        print("\(files.count) files (\(stills) stills, \(videos) videos), \(format(Double(bytes) / 1e6, 0)) MB, \(cores) cores")

        // The defaults first, then each --lanes spec applied over them; each into a fresh library.
        var cairnRows: [(label: String, seconds: Double)] = []
        for spec in [nil] + laneSpecs.map(Optional.some) {
            let cairnLibrary = work + "/cairn-library"
            try? FileManager.default.removeItem(atPath: cairnLibrary)
            var options = ImportOptions(source: source)
            options.hashWorkers = cores
            options.pipeline = PipelineConfiguration.defaults(cores: cores)
            if let spec { options.pipeline = try options.pipeline.applying(laneSpec: spec) }
            let start = ContinuousClock.now
            let summary = try await LibraryImport.run(root: cairnLibrary, options: options)
            let seconds = (ContinuousClock.now - start).seconds
            guard summary.exitStatus == .success, summary.counts.imported == files.count else {
                throw ValidationError("cairn imported \(summary.counts.imported) of \(files.count): \(summary.failures.prefix(3))")
            }
            cairnRows.append((spec.map { "cairn import --lanes \($0)" } ?? "cairn import (default lanes for \(cores) cores)", seconds))
        }
        let cairnSeconds = cairnRows[0].seconds
        if noShell {
            var table = Table(header: ["import of \(files.count) files", "seconds", "files/s", "vs defaults"])
            for row in cairnRows {
                table.rows.append([row.label, format(row.seconds), format(Double(files.count) / row.seconds),
                                   format(cairnSeconds / row.seconds, 2) + "x"])
            }
            print(table.render())
            return
        }

        let shellOut = work + "/shell-library"
        try? FileManager.default.removeItem(atPath: shellOut)
        for folder in ["originals", "probes", "derived"] {
            try FileManager.default.createDirectory(atPath: shellOut + "/" + folder, withIntermediateDirectories: true)
        }
        let script = work + "/per-file.sh"
        try perFileScript.write(toFile: script, atomically: true, encoding: .utf8)
        let list = files.joined(separator: "\n") + "\n"
        let shellSeconds = try Peers.time {
            try Peers.run(["sh", "-c", "xargs -d '\\n' -P \(cores) -n 1 sh \(script) \(shellOut)"], input: list)
        }
        let shellClips = Peers.files(in: shellOut + "/derived").count { $0.hasSuffix("-clip.mp4") }
        guard shellClips == stills else { throw ValidationError("the shell pipeline made \(shellClips) clips of \(stills)") }

        var table = Table(header: ["import of \(files.count) files", "seconds", "files/s", "vs shell"])
        for row in cairnRows {
            table.rows.append([row.label, format(row.seconds), format(Double(files.count) / row.seconds),
                               format(shellSeconds / row.seconds, 1) + "x"])
        }
        table.rows.append(["shell: sha1sum, cp, ffprobe, ffmpeg thumb+preview, ffmpeg -loop 1 clip (xargs -P \(cores))",
                           format(shellSeconds), format(Double(files.count) / shellSeconds), "1.0x"])
        print(table.render())
    }

    /// Same outputs as cairn: the original under its SHA1, a probe, a thumbnail (short side 250), a preview
    /// (short side 1440) and, for stills, a 3 s 30 fps clip fitting 1920x1080.
    var perFileScript: String {
        let thumbnail = MediaEngine.thumbnailFormat.fileExtension
        let encoder = MediaEngine.clipCodec == "h264" ? "-c:v libx264" : "-c:v mpeg4 -q:v 3"
        return """
            out="$1"; f="$2"
            sum=$(sha1sum "$f" | cut -c1-40)
            ext=$(echo "${f##*.}" | tr 'A-Z' 'a-z')
            orig="$out/originals/$sum.$ext"
            cp "$f" "$orig.partial" && mv "$orig.partial" "$orig"
            ffprobe -v error -show_format -show_streams -of json "$orig" > "$out/probes/$sum.json"
            short() { echo "scale='if(gt(iw,ih),-2,min($1,iw))':'if(gt(iw,ih),min($1,ih),-2)'"; }
            ffmpeg -v error -y -i "$orig" -frames:v 1 -vf "$(short 250)" "$out/derived/$sum-thumb.\(thumbnail)"
            ffmpeg -v error -y -i "$orig" -frames:v 1 -vf "$(short 1440)" -q:v 4 "$out/derived/$sum-preview.jpg"
            case "$ext" in
            jpg|jpeg|png|heic|webp|tif|tiff)
                ffmpeg -v error -y -loop 1 -i "$orig" -t 3 -r 30 \\
                    -vf "scale=w='min(1920,iw)':h='min(1080,ih)':force_original_aspect_ratio=decrease:force_divisible_by=2" \\
                    -pix_fmt yuv420p \(encoder) -movflags +faststart "$out/derived/$sum-clip.mp4";;
            esac

            """
    }

    /// The first `stills` JPEGs and `videos` videos of the corpus, copied (symbolic links are never imported).
    func workingCopy(of corpus: String) throws -> String {
        let folder = work + "/source-\(stills)s-\(videos)v"
        if FileManager.default.fileExists(atPath: folder) { return folder }
        let stillFiles = Peers.files(in: corpus, extensions: ["jpg", "jpeg"]).prefix(stills)
        let videoFiles = Peers.files(in: corpus, extensions: ["mp4", "mov"]).prefix(videos)
        guard stillFiles.count == stills, videoFiles.count == videos else {
            throw ValidationError("\(corpus) holds \(stillFiles.count) JPEGs and \(videoFiles.count) videos")
        }
        let partial = folder + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        try FileManager.default.createDirectory(atPath: partial, withIntermediateDirectories: true)
        for file in stillFiles + videoFiles {
            try FileManager.default.copyItem(atPath: file, toPath: partial + "/" + (file as NSString).lastPathComponent)
        }
        try FileManager.default.moveItem(atPath: partial, toPath: folder)
        return folder
    }

    // MARK: Peak RSS, 1,000 vs 10,000 files

    func compareResidentMemory() throws {
        var table = Table(header: ["files imported (clips off)", "seconds", "peak RSS MiB (VmHWM)", "vs first"])
        var first: Double?
        let benchmark = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        for count in rssFiles {
            let source = try smallJPEGCorpus(count: count)
            let start = ContinuousClock.now
            let output = try Peers.run([benchmark, "import", "--work", work, "--cores", String(cores), "--rss-child", source])
            let seconds = (ContinuousClock.now - start).seconds
            guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("RSS ") }),
                  let rss = Double(line.dropFirst(4)) else { throw ValidationError("the child said: \(output)") }
            first = first ?? rss
            table.rows.append(["\(count)", format(seconds, 1), format(rss, 1), format((rss / first! - 1) * 100, 1) + " %"])
        }
        print(table.render())
    }

    /// In the child: one import into a fresh library, then this process's peak RSS.
    func importForPeakRSS(source: String) async throws {
        let root = work + "/rss-library-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: root) }
        var options = ImportOptions(source: source)
        options.hashWorkers = cores
        options.pipeline = PipelineConfiguration.defaults(cores: cores)
        options.pipeline.clipsEnabled = false
        let summary = try await LibraryImport.run(root: root, options: options)
        guard summary.counts.imported == summary.counts.filesSeen else {
            throw ValidationError("imported \(summary.counts.imported) of \(summary.counts.filesSeen): \(summary.failures.prefix(3))")
        }
        print("RSS \(Peers.peakResidentMiB())")
    }

    /// `count` distinct small valid JPEGs, made once under `work`.
    func smallJPEGCorpus(count: Int) throws -> String { try SmallJPEGCorpus.make(count: count, work: work) }
}
