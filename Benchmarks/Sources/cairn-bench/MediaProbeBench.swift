import ArgumentParser
import CairnCore
import CairnMedia
import Foundation

/// `cairn-bench probe`: cairn's in-process probe against one `ffprobe` per file, with a result check.
struct MediaProbeBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe", abstract: "Probing media files: cairn vs one ffprobe process per file.")

    @Option(help: "The folder of media files to measure on.")
    var corpus: String

    @Option(help: "The number of cores (lanes, peer processes) every tool gets.")
    var cores: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: "Passes per tool, interleaved; the fastest counts.")
    var rounds: Int = 3

    func validate() throws {
        guard cores > 0, rounds > 0 else { throw ValidationError("--cores and --rounds must be positive.") }
    }

    /// What ffprobe says about one file, turned by its reported rotation.
    struct Reference {
        var width: Int
        var height: Int
        var rotation: Int
        var duration: Double?
    }

    func run() throws {
        let files = MediaBench.files(in: corpus, extensions: MediaBench.mediaExtensions)
        guard !files.isEmpty else { throw ValidationError("No media files in \(corpus).") }
        print("\(files.count) files, \(cores) cores")
        let engine = MediaEngine()
        let cores = self.cores
        let probed = Locked<[String: MediaProbe]>([:])
        let referenced = Locked<[String: Reference]>([:])
        let rows = MediaBench.compare([
            .init(name: "cairn probe (in process, \(cores) lanes)") {
                _ = MediaBench.inLanes(files, lanes: cores) { file in
                    let probe = try? engine.probe(path: file)
                    probed.withLock { $0[file] = probe }
                }
            },
            .init(name: "ffprobe, one process per file") {
                _ = MediaBench.inLanes(files, lanes: cores) { file in
                    let data = try MediaBench.output([
                        "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                        "stream=width,height:stream_side_data=rotation:format=duration", "-of", "json", file,
                    ])
                    let reference = Self.parse(data)
                    referenced.withLock { $0[file] = reference }
                }
            },
        ], rounds: rounds, items: files.count)
        let probes = probed.withLock { $0 }, references = referenced.withLock { $0 }
        // Compare after rotation: ffprobe reports stored sizes; a +-90 display matrix (video) or
        // EXIF orientation 5...8 (stills, which ffprobe does not apply) swaps them.
        var compared = 0, mismatches: [String] = []
        for file in files {
            guard let probe = probes[file], let reference = references[file] else { continue }
            compared += 1
            let swap = abs(reference.rotation) == 90 || (probe.kind == .photo && probe.orientation.swapsDimensions)
            let (width, height) = swap ? (reference.height, reference.width) : (reference.width, reference.height)
            var same = probe.width == width && probe.height == height
            if probe.kind == .video, let expected = reference.duration {
                same = same && abs((probe.durationSeconds ?? 0) - expected) < 0.001
            }
            if !same { mismatches.append("\(file): cairn \(probe.width ?? 0)x\(probe.height ?? 0) \(probe.durationSeconds ?? 0) vs ffprobe \(width)x\(height) \(reference.duration ?? 0)") }
        }
        MediaBench.printTable("Probe (\(probes.values.count) of \(files.count) files probed by cairn)", rows)
        print("Widths, heights, durations equal to ffprobe's (after rotation): \(compared - mismatches.count) of \(compared)")
        for line in mismatches.prefix(5) { print("  mismatch: \(line)") }
    }

    static func parse(_ data: Data) -> Reference? {
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let stream = (json["streams"] as? [[String: Any]])?.first,
              let width = stream["width"] as? Int, let height = stream["height"] as? Int else { return nil }
        let sideData = stream["side_data_list"] as? [[String: Any]] ?? []
        let rotation = sideData.compactMap { $0["rotation"] as? Int }.first ?? 0
        let duration = ((json["format"] as? [String: Any])?["duration"] as? String).flatMap(Double.init)
        return Reference(width: width, height: height, rotation: rotation, duration: duration)
    }
}
