import ArgumentParser
import CairnCore
import CairnImport
import CairnMedia
import CairnStages
import Foundation

/// `cairn probe FILE... [--json]`
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe", abstract: "Read media files' containers, streams and capture metadata.")

    @Argument(help: "The media files to probe.")
    var files: [String]

    @Flag(help: "Print one JSON object per file (errors included, with a reason) instead of text lines.")
    var json = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Give at least one file to probe.") }
    }

    func run() throws {
        let engine = MediaEngine()
        let encoder = Timestamp.jsonEncoder()
        var failures = 0
        for file in files {
            let outcome = Result { () throws(MediaError) in try engine.probe(path: file) }
            if case .failure = outcome { failures += 1 }
            if json {
                let line = ProbeLine(file: file, probe: try? outcome.get(), error: outcome.failureReason)
                print(String(decoding: try encoder.encode(line), as: UTF8.self))
            } else {
                switch outcome {
                case .success(let probe):
                    let size = probe.width.map { "\($0)x\(probe.height ?? 0)" } ?? "-"
                    let duration = probe.durationSeconds.map { String(format: "%.3f s", $0) } ?? "-"
                    let codecs = probe.streams.map(\.codec).joined(separator: ",")
                    print("\(file): \(probe.kind.rawValue) \(probe.container) \(codecs) \(size) \(duration)")
                case .failure(let error):
                    Output.error("\(error)")
                }
            }
        }
        // Like sha1sum: a file that could not be read makes the whole command fail.
        if failures > 0 {
            if !json { Output.error("\(failures) of \(files.count) files failed") }
            throw ExitCode(ExitStatus.someFilesFailed.rawValue)
        }
    }

    /// One file's line of `--json` output.
    struct ProbeLine: Encodable {
        var file: String
        var probe: MediaProbe?
        var error: MediaErrorLine?
    }
}

/// A ``MediaError`` as a JSON object.
struct MediaErrorLine: Encodable {
    var operation: String
    var reason: String
    var category: String
    var retryable: Bool
}

extension Result where Failure == MediaError {
    var failureReason: MediaErrorLine? {
        guard case .failure(let error) = self else { return nil }
        return MediaErrorLine(operation: error.operation, reason: error.reason,
                              category: error.category.rawValue, retryable: error.isRetryable)
    }
}

/// `cairn thumbnail FILE... --output DIR`
struct ThumbnailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail", abstract: "Write a thumbnail (and optionally a preview) for each photo or video.",
        discussion: """
            The files go through the same lanes as an import, on every core, each decoded once; a line per file \
            is printed in the order the files were given. A thumbnail is named after its file (`IMG_1-thumb.webp`); \
            a file that fails is named with its reason, the others go on, and the exit code is 3.
            """)

    @Argument(help: "The photos and videos to make thumbnails of.")
    var files: [String]

    @Option(name: .shortAndLong, help: "The folder the thumbnails are written to.")
    var output: String

    @Flag(help: "Also write a 1440 px preview JPEG beside each thumbnail, from the same decode.")
    var preview = false

    @OptionGroup var memory: MemoryOption

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Give at least one file.") }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: output, isDirectory: &isFolder), isFolder.boolValue else {
            throw ValidationError("--output \(output) is not an existing folder.")
        }
        _ = try memory.budget()
    }

    func run() async throws {
        let limit = try memory.budget()
        MemoryOption.tune(for: limit)
        let batch = ThumbnailBatch(files: files, outputFolder: output, makesPreviews: preview, memory: limit)
        let failures = try await batch.run { line in
            switch line {
            case .made(let file, let thumbnail):
                Output.line("\(file): \(thumbnail.width)x\(thumbnail.height) -> \(thumbnail.path)")
            case .failed(let file, let reason):
                Output.error("\(file): \(reason)")
            }
        }
        if failures > 0 {
            throw Output.fail("\(failures) of \(files.count) files failed", .someFilesFailed)
        }
    }
}

/// `cairn synthesize IMAGE --output CLIP.mp4 [--seconds S] [--ken-burns]`
struct SynthesizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synthesize", abstract: "Turn a still into a short MP4 clip.")

    @Argument(help: "The still image to turn into a clip.")
    var image: String

    @Option(name: .shortAndLong, help: "Where to write the MP4 clip.")
    var output: String

    @Option(help: "The clip's length in seconds.")
    var seconds: Double = 3

    @Flag(help: "Zoom in slowly over the clip instead of holding the picture still.")
    var kenBurns = false

    func validate() throws {
        guard seconds > 0, seconds <= 60 else { throw ValidationError("--seconds must be more than 0 and at most 60.") }
        guard output.lowercased().hasSuffix(".mp4") else { throw ValidationError("--output must name an .mp4 file.") }
    }

    func run() throws {
        let clip = try MediaEngine().synthesizeClip(
            source: image, to: output, options: ClipOptions(seconds: seconds, kenBurns: kenBurns))
        print("\(output): \(clip.codec) \(clip.width)x\(clip.height) \(String(format: "%.3f", clip.durationSeconds)) s")
    }
}
