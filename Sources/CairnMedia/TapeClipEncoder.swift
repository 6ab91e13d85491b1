import CFFmpeg
import CairnCore
import Foundation

/// Turns one source (a video, or a still) into one tape clip: a folder of fMP4 HLS segments in the tape's single
/// format, encoded in process through libavcodec and written by libavformat's hls muxer.
///
/// The clip is written straight into its folder, so a tape's playlist can name each segment as soon as it is
/// complete; the clip's own playlist gains #EXT-X-ENDLIST only when every segment is, which is what tells a
/// whole clip from what a killed build left (cleared here before a clip is made again).
public struct TapeClipEncoder: Sendable {
    public var configuration: MediaConfiguration

    public init(configuration: MediaConfiguration = MediaConfiguration()) {
        self.configuration = configuration
    }

    /// What one clip of the standard tape holds at its peak with `threads` encoder threads, by the clip encoder's
    /// table (`MemoryEstimate`: x264 at 1080p with a short lookahead), and a still decoded at the clip's size.
    public static func estimatedPeak(threads: Int, settings: TapeFormat = .standard) -> Int64 {
        let pixels = Double(settings.width * settings.height)
        let encoder = pixels * (MemoryEstimate.encoderBytesPerPixel
                                + MemoryEstimate.encoderBytesPerPixelPerThread * Double(max(1, threads)))
        return Int64(encoder + pixels * 4 * 5.5)
    }

    /// Encodes `request`; `onSegment(index, seconds)` is called, in order, as each segment file is complete.
    /// Returns every segment's duration. On failure the segments already reported stay (a tape may show them).
    public func encode(_ request: TapeClipRequest, interrupt: MediaInterrupt? = nil,
                       onSegment: (_ segmentIndex: Int, _ durationSeconds: Double) -> Void) throws(MediaError) -> [Double] {
        try MediaInterrupt.during(interrupt) { () throws(MediaError) in
            try encodeNow(request, onSegment: onSegment)
        }
    }

    private func encodeNow(_ request: TapeClipRequest, onSegment: (Int, Double) -> Void) throws(MediaError) -> [Double] {
        let call = FFmpegCall(file: request.sourcePath)
        try Self.checkSettings(request, call: call)
        let folder = request.folder
        try Self.fileSystem(call, "prepare clip folder") {
            // What a killed build left behind is not part of any clip.
            if FileManager.default.fileExists(atPath: folder) { try FileManager.default.removeItem(atPath: folder) }
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let muxer = try TapeMuxer(folder: folder, settings: request.settings, effort: request.effort, call: call)
        switch request.source {
        case .video(let maxSeconds):
            var decoding = configuration
            // A clip the tape waits for has the machine to itself: its decoder takes every core as well.
            if request.effort == .urgent { decoding.decoderThreads = max(decoding.decoderThreads, System.coreCount) }
            try TapeVideoSource(configuration: decoding, path: request.sourcePath, byteRange: nil,
                                maxSeconds: maxSeconds, muxer: muxer).write(onSegment: onSegment)
        case .still(let seconds, let kenBurns):
            // A motion photo plays the movie it carries (for at most the still's time), read in place; should
            // that movie not decode at all, the still is shown instead.
            if let movie = try? MotionPhoto.embeddedVideoRange(ofFileAt: request.sourcePath) {
                do {
                    try TapeVideoSource(configuration: configuration, path: request.sourcePath, byteRange: movie,
                                        maxSeconds: seconds, muxer: muxer).write(onSegment: onSegment)
                    break
                } catch where error.category != .interrupted && muxer.videoFrames == 0 {}
            }
            try TapeStillSource(configuration: configuration, path: request.sourcePath, seconds: seconds,
                                kenBurns: kenBurns, muxer: muxer).write(onSegment: onSegment)
        }
        let durations = try muxer.finish()
        muxer.report(onSegment)
        return durations
    }

    private static func checkSettings(_ request: TapeClipRequest, call: FFmpegCall) throws(MediaError) {
        let settings = request.settings
        guard settings.width > 0, settings.height > 0, settings.width % 2 == 0, settings.height % 2 == 0,
              settings.framesPerSecond > 0, settings.keyframeInterval > 0, settings.audioSampleRate > 0,
              settings.audioChannels > 0, settings.segmentSeconds > 0 else {
            throw call.failure("tape clip", "unusable clip settings \(settings)", .engine)
        }
        let seconds: Double
        switch request.source {
        case .video(let maxSeconds): seconds = maxSeconds
        case .still(let stillSeconds, _): seconds = stillSeconds
        }
        guard seconds.isFinite, seconds > 0, seconds < 86_400 else {
            throw call.failure("tape clip", "clip needs a positive duration, not \(seconds) s", .engine)
        }
    }

    /// Runs a file-system step, reporting a failure as an I/O error on the source's clip.
    private static func fileSystem(_ call: FFmpegCall, _ operation: String,
                                   _ body: () throws -> Void) throws(MediaError) {
        do { try body() } catch {
            throw call.failure(operation, "\(error.localizedDescription)", .io)
        }
    }
}
