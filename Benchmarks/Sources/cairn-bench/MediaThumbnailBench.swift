import ArgumentParser
import CairnMedia
import Foundation

/// `cairn-bench thumbnails`: one thumbnail per still, cairn against vipsthumbnail, djpeg (the decoder's own
/// limit), heif-convert, ffmpeg and ImageMagick, on the same files in the same run.
struct MediaThumbnailBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnails",
        abstract: "Thumbnails of real stills: cairn vs vipsthumbnail, djpeg -scale, heif-convert, ffmpeg, convert.")

    enum StillFamily: String, ExpressibleByArgument, CaseIterable {
        case jpeg, heif
        var extensions: Set<String> { self == .jpeg ? ["jpg", "jpeg"] : ["heic", "heif", "hif", "avif"] }
    }

    @Option(help: "The folder of media files to measure on (searched recursively).")
    var corpus: String

    @Option(help: "Which stills to use: jpeg (.jpg, .jpeg) or heif (.heic, .heif, .avif).")
    var family: StillFamily = .jpeg

    @Option(help: "Use only files of at least this many bytes (real photos, not tiny test images).")
    var minBytes: Int = 0

    @Option(help: "The number of cores (lanes, peer processes) every tool gets.")
    var cores: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: "The thumbnail's short side, in pixels.")
    var size: Int = MediaConfiguration().thumbnailShortSide

    @Option(help: "Use only the largest this many files (0: all).")
    var limit: Int = 0

    @Option(help: "Passes per tool, interleaved; the fastest counts.")
    var rounds: Int = 3

    @Option(help: "Shrink-on-load keeps the decoded short side at least this many times the thumbnail's.")
    var shrinkMargin: Double = MediaConfiguration().shrinkOnLoadMargin

    @Option(help: "The cairn command to time as users run it (default: a release build beside this tool or in the root package).")
    var command: String?

    @Flag(inversion: .prefixedNo, help: "Run the peer tools too (--no-peers measures cairn alone).")
    var peers = true

    func validate() throws {
        guard cores > 0, rounds > 0 else { throw ValidationError("--cores and --rounds must be positive.") }
        guard size > 0 else { throw ValidationError("--size must be positive.") }
        guard shrinkMargin >= 1 else { throw ValidationError("--shrink-margin must be at least 1.") }
    }

    func run() throws {
        let sizes = Dictionary(MediaBench.files(in: corpus, extensions: family.extensions).map {
            ($0, (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? 0)
        }, uniquingKeysWith: { first, _ in first })
        var selected = sizes.filter { $0.value >= minBytes }.keys.sorted { (sizes[$0]!, $1) > (sizes[$1]!, $0) }
        if limit > 0 { selected = Array(selected.prefix(limit)) }
        guard !selected.isEmpty else { throw ValidationError("No \(family.rawValue) files in \(corpus).") }
        // Files cairn cannot read are left out, so every tool works on the same set.
        let files = selected.filter { (try? MediaEngine().probe(path: $0)) != nil }
        if files.count < selected.count { print("left out \(selected.count - files.count) files cairn cannot probe") }
        let bytes = files.reduce(0) { $0 + (((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int)) ?? 0) }
        let out = try MediaBench.scratch("thumbs")
        defer { try? FileManager.default.removeItem(atPath: out) }
        print("\(files.count) \(family.rawValue) files (\(bytes / 1_000_000) MB), \(cores) cores, \(size) px short side, shrink-on-load margin \(shrinkMargin), best of \(rounds)")

        var configuration = MediaConfiguration()
        configuration.thumbnailShortSide = size
        configuration.thumbnailFormat = .jpeg
        configuration.shrinkOnLoadMargin = shrinkMargin
        let jpegEngine = MediaEngine(configuration: configuration)
        var webp = configuration
        webp.thumbnailFormat = .webp
        let webpEngine = MediaEngine(configuration: webp)
        var fullConfiguration = configuration
        fullConfiguration.thumbnailFormat = MediaEngine.thumbnailFormat
        let full = fullConfiguration
        let fullEngine = MediaEngine(configuration: full)
        let cores = self.cores, size = self.size

        // Peak RSS: measured on a first cairn pass alone, before anything else runs in this process.
        _ = try? jpegEngine.renderThumbnail(source: files[0], kind: .photo, to: out + "/warm.jpg")
        let baseline = MediaBench.memory("VmRSS")
        MediaBench.resetPeakRSS()
        let failures = MediaBench.inLanes(files, lanes: cores) { file in
            _ = try jpegEngine.renderThumbnail(source: file, kind: .photo, to: "\(out)/\(MediaBench.stem(file))-c.jpg")
        }
        let peak = MediaBench.memory("VmHWM")
        if !failures.isEmpty { print("cairn failures: \(failures.prefix(3))") }
        let thumbRSS = String(format: "peak RSS %.0f MB: %.0f MB baseline + %.1f MB per lane",
                              Double(peak) / 1_048_576, Double(baseline) / 1_048_576,
                              Double(peak - baseline) / Double(cores) / 1_048_576)
        MediaBench.resetPeakRSS()
        _ = MediaBench.inLanes(files, lanes: cores) { file in
            let stem = MediaBench.stem(file)
            _ = try fullEngine.renderDerivatives(source: file, kind: .photo, thumbnail: "\(out)/\(stem)-t.\(full.thumbnailFormat.fileExtension)",
                                                 preview: "\(out)/\(stem)-p.jpg")
        }
        let fullRSS = String(format: "peak RSS %.0f MB: %.1f MB per lane", Double(MediaBench.memory("VmHWM")) / 1_048_576,
                             Double(MediaBench.memory("VmHWM") - baseline) / Double(cores) / 1_048_576)

        // The library's format first: every ratio is against it.
        var contenders: [MediaBench.Contender] = [
            .init(name: "cairn thumbnail (WebP, \(cores) lanes)") {
                _ = MediaBench.inLanes(files, lanes: cores) { file in
                    _ = try webpEngine.renderThumbnail(source: file, kind: .photo, to: "\(out)/\(MediaBench.stem(file))-c.webp")
                }
            },
            .init(name: "cairn thumbnail (JPEG, \(cores) lanes)", note: { thumbRSS }) {
                _ = MediaBench.inLanes(files, lanes: cores) { file in
                    _ = try jpegEngine.renderThumbnail(source: file, kind: .photo, to: "\(out)/\(MediaBench.stem(file))-c.jpg")
                }
            },
        ]
        if MediaEngine.thumbnailFormat != .webp { contenders.swapAt(0, 1) }
        contenders += commandContenders(files: files, out: out, cores: cores)
        contenders.append(.init(name: "cairn full set (thumb + 1440 px preview)", note: { fullRSS }) {
            _ = MediaBench.inLanes(files, lanes: cores) { file in
                let stem = MediaBench.stem(file)
                _ = try fullEngine.renderDerivatives(
                    source: file, kind: .photo, thumbnail: "\(out)/\(stem)-t.\(full.thumbnailFormat.fileExtension)",
                    preview: "\(out)/\(stem)-p.jpg")
            }
        })
        if peers { contenders += peerContenders(files: files, out: out, cores: cores, size: size, configuration: configuration) }
        MediaBench.printTable("Thumbnails (like for like: one \(size) px short side per file; ratios against the first row)",
                              MediaBench.compare(contenders, rounds: rounds, items: files.count))
    }

    /// The `cairn thumbnail` command as a user runs it (issue 30.3): one process given every file (its own lanes
    /// on every core), against one process per core given an equal share, the best a user could do by hand.
    /// Measured only when the command is built beside this tool, and only at the library's thumbnail size.
    private func commandContenders(files: [String], out: String, cores: Int) -> [MediaBench.Contender] {
        let beside = ((CommandLine.arguments[0] as NSString).deletingLastPathComponent as NSString).appendingPathComponent("cairn")
        let candidates = [command, beside, "../.build/release/cairn", ".build/release/cairn"].compactMap { $0 }
        guard let command = candidates.first(where: FileManager.default.isExecutableFile(atPath:)),
              size == MediaConfiguration().thumbnailShortSide else {
            print("cairn command rows skipped: no release build of cairn (--command), or --size is not the library's")
            return []
        }
        let shards = (0..<cores).map { lane in stride(from: lane, to: files.count, by: cores).map { files[$0] } }
            .filter { !$0.isEmpty }
        return [
            .init(name: "cairn thumbnail FILE... (one process)") {
                try? MediaBench.run([command, "thumbnail"] + files + ["--output", out])
            },
            .init(name: "cairn thumbnail, one process per core") {
                _ = MediaBench.inLanes(shards, lanes: cores) { shard in
                    try MediaBench.run([command, "thumbnail"] + shard + ["--output", out])
                }
            },
        ]
    }

    private func peerContenders(files: [String], out: String, cores: Int, size: Int,
                                configuration: MediaConfiguration) -> [MediaBench.Contender] {
        var contenders: [MediaBench.Contender] = []
        let shards = (0..<cores).map { lane in stride(from: lane, to: files.count, by: cores).map { files[$0] } }
            .filter { !$0.isEmpty }
        let preview = MediaConfiguration().previewShortSide
        // vipsthumbnail keeps a picture's own colour profile attached unless told to export one; cairn converts every
        // picture to sRGB (a phone's Display P3 included). The "to sRGB" rows make vips do the same work.
        for (label, colour) in [("", [String]()), (", to sRGB", ["--export-profile", "srgb"])]
        where MediaBench.available("vipsthumbnail") {
            // The same two sizes cairn's full set makes, each from its own decode (vips has no one-decode mode).
            contenders.append(.init(name: "vipsthumbnail batch, thumb + \(preview) px preview\(label)") {
                _ = MediaBench.inLanes(shards, lanes: cores) { shard in
                    try MediaBench.run(["vipsthumbnail", "-s", "100000x\(size)", "-o", "\(out)/%s-vt.jpg[Q=75]"] + colour + shard,
                                       environment: ["VIPS_CONCURRENCY": "1"])
                    try MediaBench.run(["vipsthumbnail", "-s", "100000x\(preview)", "-o", "\(out)/%s-vp.jpg[Q=80]"] + colour + shard,
                                       environment: ["VIPS_CONCURRENCY": "1"])
                }
            })
        }
        if family == .jpeg, MediaBench.available("djpeg") {
            // The decoder's own limit: libjpeg-turbo at the DCT scale cairn picks for each file, output discarded.
            let scales = files.map { file -> Int in
                guard let probe = try? MediaEngine().probe(path: file), let w = probe.width, let h = probe.height else { return 1 }
                guard configuration.shrinkOnLoad else { return 1 }
                var level = 0
                while level < 3, Double(min(w, h) >> (level + 1)) >= configuration.shrinkOnLoadMargin * Double(size) { level += 1 }
                return 1 << level
            }
            let jobs = Array(zip(files, scales))
            contenders.append(.init(name: "djpeg -scale 1/N, one process per file", note: { "N as cairn picks it" }) {
                _ = MediaBench.inLanes(jobs, lanes: cores) { job in
                    try MediaBench.run(["djpeg", "-scale", "1/\(job.1)", "-outfile", "/dev/null", job.0])
                }
            })
        }
        if family == .heif, MediaBench.available("heif-convert") {
            contenders.append(.init(name: "heif-convert to JPEG, one process per file", note: { "full-size decode" }) {
                _ = MediaBench.inLanes(files, lanes: cores) { file in
                    try MediaBench.run(["heif-convert", "-q", "75", file, "\(out)/\(MediaBench.stem(file))-h.jpg"])
                }
            })
        }
        // vipsthumbnail in batch mode: one process per core, each given its share of the files. WebP at the same
        // short side and quality: a box as tall as the short side for landscape files, as wide for portrait ones.
        if MediaBench.available("vipsthumbnail") {
            let upright = files.map { file -> Bool in
                guard let probe = try? MediaEngine().probe(path: file), let w = probe.width, let h = probe.height else { return false }
                return h > w
            }
            let webpShards = shards.map { shard in
                (shard.filter { !upright[files.firstIndex(of: $0)!] }, shard.filter { upright[files.firstIndex(of: $0)!] })
            }
            for (label, colour) in [("", [String]()), (", to sRGB", ["--export-profile", "srgb"])] {
                contenders.append(.init(name: "vipsthumbnail batch, WebP (\(cores) processes)\(label)",
                                        note: { "Q=75, vips's default effort" }) {
                    _ = MediaBench.inLanes(webpShards, lanes: cores) { landscape, portrait in
                        if !landscape.isEmpty {
                            try MediaBench.run(["vipsthumbnail", "-s", "100000x\(size)", "-o", "\(out)/%s-v.webp[Q=75]"]
                                               + colour + landscape, environment: ["VIPS_CONCURRENCY": "1"])
                        }
                        if !portrait.isEmpty {
                            try MediaBench.run(["vipsthumbnail", "-s", "\(size)x100000", "-o", "\(out)/%s-v.webp[Q=75]"]
                                               + colour + portrait, environment: ["VIPS_CONCURRENCY": "1"])
                        }
                    }
                })
            }
        }
        if MediaBench.available("vipsthumbnail") {
            contenders.append(.init(name: "vipsthumbnail batch (\(cores) processes)",
                                    note: { "box 100000x\(size): same size on landscape files" }) {
                _ = MediaBench.inLanes(shards, lanes: cores) { shard in
                    try MediaBench.run(["vipsthumbnail", "-s", "100000x\(size)", "-o", "\(out)/%s-v.jpg[Q=75]"] + shard,
                                       environment: ["VIPS_CONCURRENCY": "1"])
                }
            })
        }
        if family == .jpeg, MediaBench.available("ffmpeg") {  // FFmpeg 5.1 cannot read HEIF
            contenders.append(.init(name: "ffmpeg, one process per file") {
                _ = MediaBench.inLanes(files, lanes: cores) { file in
                    try MediaBench.run(["ffmpeg", "-v", "error", "-y", "-i", file, "-vf",
                                        "scale=w='if(gt(iw,ih),-2,\(size))':h='if(gt(iw,ih),\(size),-2)':flags=lanczos",
                                        "-frames:v", "1", "-q:v", "4", "\(out)/\(MediaBench.stem(file))-f.jpg"])
                }
            })
        }
        if let convert = MediaBench.imageMagickConvert() {
            contenders.append(.init(name: "ImageMagick convert -thumbnail, per file") {
                _ = MediaBench.inLanes(files, lanes: cores) { file in
                    try MediaBench.run([convert, file, "-thumbnail", "\(size)x\(size)^", "-quality", "80",
                                        "\(out)/\(MediaBench.stem(file))-m.jpg"])
                }
            })
        } else {
            print("ImageMagick not installed: convert row skipped")
        }
        return contenders
    }
}
