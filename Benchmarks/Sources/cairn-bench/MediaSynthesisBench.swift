import ArgumentParser
import CairnCore
import CairnMedia
import Foundation

/// `cairn-bench synthesis`: a still to a 3 s 1080p clip, cairn against the naive `ffmpeg -loop 1`
/// command and a decode-once ffmpeg command line.
struct MediaSynthesisBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synthesis", abstract: "Still-to-clip synthesis: cairn vs ffmpeg -loop 1 and a decode-once ffmpeg.")

    @Option(help: "The folder of media files to measure on (JPEGs are used).")
    var corpus: String

    @Option(help: "The number of cores (lanes, peer processes) every tool gets.")
    var cores: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: "How many stills to turn into clips.")
    var count: Int = 4

    @Option(help: "The clip's length in seconds.")
    var seconds: Double = 3

    @Option(help: "Passes per tool, interleaved; the fastest counts.")
    var rounds: Int = 2

    func validate() throws {
        guard rounds > 0 else { throw ValidationError("--rounds must be positive.") }
        guard cores > 0, count > 0, seconds > 0 else { throw ValidationError("--cores, --count and --seconds must be positive.") }
    }

    func run() throws {
        let files = Array(MediaBench.files(in: corpus, extensions: MediaBench.stillExtensions).prefix(count))
        guard !files.isEmpty else { throw ValidationError("No JPEGs in \(corpus).") }
        let out = try MediaBench.scratch("clips")
        defer { try? FileManager.default.removeItem(atPath: out) }
        print("\(files.count) stills -> \(seconds) s 1080p clips, \(cores) cores, encoder \(MediaEngine.clipCodec)")
        var configuration = MediaConfiguration()
        configuration.clipEncoderThreads = cores
        let engine = MediaEngine(configuration: configuration)
        let options = ClipOptions(seconds: seconds)
        let durations = Locked<[Double]>([])
        let fit = "scale=w='min(1920,iw)':h='min(1080,ih)':force_original_aspect_ratio=decrease:force_divisible_by=2"
        let encoder = MediaEngine.clipCodec == "h264" ? ["-c:v", "libx264"] : ["-c:v", "mpeg4", "-q:v", "3"]
        let frames = Int((seconds * 30).rounded())
        let seconds = self.seconds, cores = self.cores
        // Clips are made one after another; every tool may use all `cores` for each clip.
        let rows = MediaBench.compare([
            .init(name: "cairn synthesize (decode once, repeated frames)",
                  note: { "clip durations " + Set(durations.withLock { $0 }.map { String(format: "%.3f s", $0) }).sorted().joined(separator: ", ") }) {
                let failures = MediaBench.inLanes(files, lanes: 1) { file in
                    let clip = try engine.synthesizeClip(source: file, to: "\(out)/\(MediaBench.stem(file))-c.mp4", options: options)
                    durations.withLock { $0.append(clip.durationSeconds) }
                }
                if !failures.isEmpty { print("cairn failures: \(failures.prefix(3))") }
            },
            .init(name: "ffmpeg -loop 1 -i img -t \(seconds) (naive)") {
                _ = MediaBench.inLanes(files, lanes: 1) { file in
                    try MediaBench.run(["ffmpeg", "-v", "error", "-y", "-threads", String(cores), "-loop", "1", "-i", file,
                                        "-t", String(seconds), "-r", "30", "-vf", fit, "-pix_fmt", "yuv420p"] + encoder
                                       + ["-movflags", "+faststart", "\(out)/\(MediaBench.stem(file))-n.mp4"])
                }
            },
            .init(name: "ffmpeg decode once + loop filter, same x264 settings") {
                _ = MediaBench.inLanes(files, lanes: 1) { file in
                    try MediaBench.run(["ffmpeg", "-v", "error", "-y", "-threads", String(cores), "-i", file, "-vf",
                                        "\(fit),format=yuv420p,loop=loop=\(frames - 1):size=1:start=0,setpts=N/30/TB",
                                        "-r", "30", "-frames:v", String(frames)] + encoder
                                       + (MediaEngine.clipCodec == "h264" ? ["-preset", "veryfast", "-tune", "stillimage", "-crf", "20"] : [])
                                       + ["-movflags", "+faststart", "\(out)/\(MediaBench.stem(file))-d.mp4"])
                }
            },
        ], rounds: rounds, items: files.count)
        MediaBench.printTable("Synthesis (\(seconds) s clips, bounded to 1080p)", rows, unit: "clips")
    }
}
