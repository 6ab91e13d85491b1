import ArgumentParser
import CairnMedia
import Foundation

/// `cairn-bench thumbnails`: one thumbnail per JPEG, cairn against vipsthumbnail, ffmpeg and ImageMagick.
struct MediaThumbnailBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnails", abstract: "Thumbnails of camera JPEGs: cairn vs vipsthumbnail, ffmpeg, convert.")

    @Option(help: "The folder of media files to measure on (JPEGs are used).")
    var corpus: String

    @Option(help: "The number of cores (lanes, peer processes) every tool gets.")
    var cores: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: "The thumbnail's short side, in pixels.")
    var size: Int = 256

    @Option(help: "Use at most this many files (0: all).")
    var limit: Int = 0

    @Option(help: "Shrink-on-load keeps the decoded short side at least this many times the thumbnail's.")
    var shrinkMargin: Double = MediaConfiguration().shrinkOnLoadMargin

    @Flag(inversion: .prefixedNo, help: "Run the peer tools too (--no-peers measures cairn alone).")
    var peers = true

    func validate() throws {
        guard cores > 0 else { throw ValidationError("--cores must be positive.") }
        guard size > 0 else { throw ValidationError("--size must be positive.") }
        guard shrinkMargin >= 1 else { throw ValidationError("--shrink-margin must be at least 1.") }
    }

    func run() throws {
        var files = MediaBench.files(in: corpus, extensions: MediaBench.stillExtensions)
        if limit > 0 { files = Array(files.prefix(limit)) }
        guard !files.isEmpty else { throw ValidationError("No JPEGs in \(corpus).") }
        let out = try MediaBench.scratch("thumbs")
        defer { try? FileManager.default.removeItem(atPath: out) }
        print("\(files.count) JPEGs, \(cores) cores, \(size) px short side, shrink-on-load margin \(shrinkMargin)")

        var configuration = MediaConfiguration()
        configuration.thumbnailShortSide = size
        configuration.thumbnailFormat = .jpeg
        configuration.shrinkOnLoadMargin = shrinkMargin
        let jpegEngine = MediaEngine(configuration: configuration)
        var rows: [MediaBench.Row] = []

        // cairn first, so this process's peak RSS is cairn's own.
        _ = try? jpegEngine.renderThumbnail(source: files[0], kind: .photo, to: out + "/warm.jpg")
        let baseline = MediaBench.memory("VmRSS")
        MediaBench.resetPeakRSS()
        var failures: [String] = []
        let cairnSeconds = MediaBench.time {
            failures = MediaBench.inLanes(files, lanes: cores) { file in
                _ = try jpegEngine.renderThumbnail(source: file, kind: .photo, to: "\(out)/\(MediaBench.stem(file))-c.jpg")
            }
        }
        let peak = MediaBench.memory("VmHWM")
        let perLane = Double(peak - baseline) / Double(cores) / 1_048_576
        rows.append(.init(name: "cairn thumbnail (JPEG, \(cores) lanes)", seconds: cairnSeconds, items: files.count,
                          note: String(format: "peak RSS %.0f MB, ~%.1f MB/lane above baseline", Double(peak) / 1_048_576, perLane)))
        if !failures.isEmpty { print("cairn failures: \(failures.prefix(3))") }

        if MediaEngine.thumbnailFormat == .webp {
            var webp = configuration
            webp.thumbnailFormat = .webp
            let engine = MediaEngine(configuration: webp)
            let seconds = MediaBench.time {
                _ = MediaBench.inLanes(files, lanes: cores) { file in
                    _ = try engine.renderThumbnail(source: file, kind: .photo, to: "\(out)/\(MediaBench.stem(file))-c.webp")
                }
            }
            rows.append(.init(name: "cairn thumbnail (WebP, \(cores) lanes)", seconds: seconds, items: files.count))
        }

        var full = configuration
        full.thumbnailFormat = MediaEngine.thumbnailFormat
        let fullEngine = MediaEngine(configuration: full)
        MediaBench.resetPeakRSS()
        let fullSeconds = MediaBench.time {
            _ = MediaBench.inLanes(files, lanes: cores) { file in
                let stem = MediaBench.stem(file)
                _ = try fullEngine.renderDerivatives(
                    source: file, kind: .photo, thumbnail: "\(out)/\(stem)-t.\(full.thumbnailFormat.fileExtension)",
                    preview: "\(out)/\(stem)-p.jpg")
            }
        }
        rows.append(.init(name: "cairn full set (thumb + 1440 preview)", seconds: fullSeconds, items: files.count,
                          note: String(format: "peak RSS %.0f MB", Double(MediaBench.memory("VmHWM")) / 1_048_576)))

        guard peers else { return MediaBench.printTable("Thumbnails (cairn alone)", rows) }

        // vipsthumbnail in batch mode: one process per core, each given its share of the files.
        if MediaBench.available("vipsthumbnail") {
            let shards = (0..<cores).map { lane in stride(from: lane, to: files.count, by: cores).map { files[$0] } }
            let seconds = MediaBench.time {
                _ = MediaBench.inLanes(shards.filter { !$0.isEmpty }, lanes: cores) { shard in
                    try MediaBench.run(["vipsthumbnail", "-s", "100000x\(size)", "-o", "\(out)/%s-v.jpg[Q=75]"] + shard,
                                       environment: ["VIPS_CONCURRENCY": "1"])
                }
            }
            rows.append(.init(name: "vipsthumbnail batch (\(cores) processes)", seconds: seconds, items: files.count,
                              note: "box 100000x\(size): same size on landscape files"))
        }
        if MediaBench.available("ffmpeg") {
            let seconds = MediaBench.time {
                _ = MediaBench.inLanes(files, lanes: cores) { file in
                    try MediaBench.run(["ffmpeg", "-v", "error", "-y", "-i", file, "-vf",
                                        "scale=w='if(gt(iw,ih),-2,\(size))':h='if(gt(iw,ih),\(size),-2)':flags=lanczos",
                                        "-frames:v", "1", "-q:v", "4", "\(out)/\(MediaBench.stem(file))-f.jpg"])
                }
            }
            rows.append(.init(name: "ffmpeg, one process per file", seconds: seconds, items: files.count))
        }
        if let convert = MediaBench.imageMagickConvert() {
            let seconds = MediaBench.time {
                _ = MediaBench.inLanes(files, lanes: cores) { file in
                    try MediaBench.run([convert, file, "-thumbnail", "\(size)x\(size)^", "-quality", "80",
                                        "\(out)/\(MediaBench.stem(file))-m.jpg"])
                }
            }
            rows.append(.init(name: "ImageMagick convert -thumbnail, per file", seconds: seconds, items: files.count))
        } else {
            print("ImageMagick not installed: convert row skipped")
        }
        MediaBench.printTable("Thumbnails (like for like: one \(size) px JPEG thumbnail per file)", rows)
    }
}
