import CairnTesting
import Foundation
import Testing
@testable import CairnMedia

/// Issue 29: one source becomes one tape clip (fMP4 HLS in the tape format), written in process.
@Suite struct TapeClipEncoderTests {
    let folder: TemporaryDirectory
    let encoder = TapeClipEncoder()
    static let frame = 1.0 / 30

    init() throws { folder = try TemporaryDirectory(prefix: "cairn-tape-clip") }

    /// Encodes `source`, collecting the segments the callback reports.
    func encode(_ path: String, _ source: TapeClipRequest.Source, name: String) throws
        -> (folder: String, durations: [Double], reported: [(Int, Double)])
    {
        let clip = folder.subpath(name)
        var reported: [(Int, Double)] = []
        let durations = try encoder.encode(TapeClipRequest(sourcePath: path, source: source, folder: clip)) { index, seconds in
            // Reported only once the segment's file is complete on disk.
            #expect(FileManager.default.fileExists(atPath: clip + "/" + TapeClipRequest.segmentName(index)))
            reported.append((index, seconds))
        }
        return (clip, durations, reported)
    }

    /// Whether `clip` looks like a whole clip: its playlist ended. What a failed encode leaves never does.
    static func isComplete(_ clip: String) -> Bool {
        (try? String(contentsOfFile: clip + "/clip.m3u8", encoding: .utf8))?.contains("#EXT-X-ENDLIST") == true
    }

    /// The streams ffprobe sees through the clip's playlist.
    func streams(_ clip: String) throws -> [[String: Any]] {
        let data = try ExternalTool.run([
            "ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name,width,height,pix_fmt,sample_rate,channels",
            "-of", "json", clip + "/clip.m3u8",
        ])
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return json?["streams"] as? [[String: Any]] ?? []
    }

    /// When a stream's packets start and end, read through the playlist. AAC's priming samples (one encoder frame
    /// before the first sound) make the audio start earlier; where both streams end is what must match.
    func span(_ clip: String, stream: String) throws -> (start: Double, end: Double) {
        let text = String(decoding: try ExternalTool.run([
            "ffprobe", "-v", "error", "-select_streams", stream, "-show_entries", "packet=pts_time,duration_time",
            "-of", "csv=p=0", clip + "/clip.m3u8",
        ]), as: UTF8.self)
        var start = Double.infinity
        var end = -Double.infinity
        // The HLS demuxer sometimes leaves a packet's duration unknown: an AAC frame or a video frame, then.
        let typical = stream == "a" ? 1024.0 / 48_000 : Self.frame
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
            guard fields.count == 2, let pts = fields[0] else { continue }
            start = min(start, pts)
            end = max(end, pts + (fields[1] ?? typical))
        }
        return (start, end)
    }

    /// The video lasts `seconds` and the audio ends with it, within a frame.
    func checkDurations(_ clip: String, seconds: Double) throws {
        let video = try span(clip, stream: "v")
        let audio = try span(clip, stream: "a")
        #expect(abs(video.end - video.start - seconds) <= Self.frame + 1e-3, "video \(video)")
        #expect(abs(video.end - audio.end) <= Self.frame, "video \(video), audio \(audio)")
        #expect(audio.start <= video.start + 1e-3, "video \(video), audio \(audio)")
    }

    /// Decodes the whole clip through its playlist; FFmpeg's complaints, if any.
    func decodeErrors(_ clip: String) throws -> String {
        let finished = try Self.standardError(of: [
            "ffmpeg", "-hide_banner", "-v", "error", "-i", clip + "/clip.m3u8", "-f", "null", "-",
        ])
        #expect(finished.status == 0)
        return finished.text
    }

    /// Runs a tool whose verdict is on standard error (ffmpeg's null output); standard output is discarded.
    static func standardError(of arguments: [String]) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func checkFormat(_ clip: String) throws {
        let found = try streams(clip)
        let video = found.first { $0["codec_type"] as? String == "video" }
        let audio = found.first { $0["codec_type"] as? String == "audio" }
        #expect(video?["codec_name"] as? String == "h264")
        #expect(video?["width"] as? Int == 1920 && video?["height"] as? Int == 1080)
        #expect(video?["pix_fmt"] as? String == "yuv420p")
        #expect(audio?["codec_name"] as? String == "aac")
        #expect(audio?["sample_rate"] as? String == "48000")
        #expect(audio?["channels"] as? Int == 2)
    }

    @Test func videoIsTrimmedAndSegmentedInTheTapeFormat() throws {
        let source = try MediaFixtures.video(at: folder.subpath("source.mp4"), width: 640, height: 360, seconds: 5)
        let result = try encode(source, .video(maxSeconds: 4), name: "clip-video")
        #expect(result.reported.map(\.0) == Array(0..<result.durations.count))
        #expect(result.reported.map(\.1) == result.durations)
        #expect(abs(result.durations.reduce(0, +) - 4) <= Self.frame + 1e-3)
        #expect(result.durations.allSatisfy { $0 <= 2.05 })
        let playlist = try String(contentsOfFile: result.folder + "/clip.m3u8", encoding: .utf8)
        #expect(playlist.contains("#EXT-X-ENDLIST"))
        #expect(FileManager.default.fileExists(atPath: result.folder + "/init.mp4"))
        try checkFormat(result.folder)
        try checkDurations(result.folder, seconds: 4)
        #expect(try decodeErrors(result.folder) == "")
    }

    @Test func portraitPhoneVideoComesOutUprightAndPadded() throws {
        // Stored 320x180 with a display matrix: shown upright it is 180x320, red on top, blue below.
        let source = try MediaFixtures.rotatedPhoneVideo(at: folder.subpath("phone.mp4"))
        let result = try encode(source, .video(maxSeconds: 6), name: "clip-phone")
        let gray = try ExternalTool.run([
            "ffmpeg", "-v", "error", "-i", result.folder + "/clip.m3u8", "-frames:v", "1", "-f", "rawvideo",
            "-pix_fmt", "gray", "-",
        ])
        try #require(gray.count == 1920 * 1080)
        let pixels = [UInt8](gray)
        var (left, right, top, bottom) = (1920, -1, 1080, -1)
        for y in 0..<1080 {
            for x in 0..<1920 where pixels[y * 1920 + x] > 12 {
                left = min(left, x); right = max(right, x); top = min(top, y); bottom = max(bottom, y)
            }
        }
        let width = right - left + 1
        let height = bottom - top + 1
        #expect(height > width, "content \(width)x\(height)")
        #expect(abs(width - 608) <= 8 && height >= 1070, "content \(width)x\(height)")
        #expect(left >= 640 && right <= 1280, "padded left and right: \(left)...\(right)")
        func mean(_ rows: Range<Int>) -> Double {
            var sum = 0
            for y in rows { for x in (left + 20)..<(right - 20) { sum += Int(pixels[y * 1920 + x]) } }
            return Double(sum) / Double(rows.count * (width - 40))
        }
        // Red is brighter than blue in luma: the top is red only when the picture is upright.
        #expect(mean(100..<400) > mean(700..<1000) + 20)
        try checkFormat(result.folder)
    }

    /// The H.264 configuration record (`avcC`: profile, level, SPS and PPS) of a clip's init segment.
    static func decoderConfiguration(_ clip: String) throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clip + "/" + TapeClipRequest.initName)))
        let name = Array("avcC".utf8)
        let at = try #require((4..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == name })
        let size = bytes[(at - 4)..<at].reduce(0) { $0 << 8 | Int($1) }
        return Array(bytes[at..<(at - 4 + size)])
    }

    /// A clip the tape waits for is encoded faster, but with the same parameter sets as every other clip: a
    /// tape's clips join into one file with one sample description, and players keep the first init segment.
    @Test func urgentAndBackgroundClipsShareOneDecoderConfiguration() throws {
        let source = try MediaFixtures.video(at: folder.subpath("both.mp4"), width: 640, height: 360, seconds: 2)
        var configurations: [[UInt8]] = []
        for (name, effort) in [("urgent", TapeClipRequest.Effort.urgent), ("background", .background(threads: 1))] {
            let clip = folder.subpath("clip-" + name)
            _ = try encoder.encode(TapeClipRequest(sourcePath: source, source: .video(), folder: clip, effort: effort)) { _, _ in }
            try checkFormat(clip)
            try checkDurations(clip, seconds: 2)
            configurations.append(try Self.decoderConfiguration(clip))
        }
        #expect(configurations[0].count > 16 && configurations[0] == configurations[1])
    }

    @Test func videoWithoutSoundGetsSilenceOfTheSameLength() throws {
        let source = folder.subpath("silent.mp4")
        try ExternalTool.ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25", "-t", "3", "-c:v", "libx264", "-preset", "ultrafast",
            "-pix_fmt", "yuv420p", source,
        ])
        let result = try encode(source, .video(maxSeconds: 6), name: "clip-silent")
        #expect(abs(result.durations.reduce(0, +) - 3) <= Self.frame + 1e-3)
        try checkFormat(result.folder)
        try checkDurations(result.folder, seconds: 3)
        let volume = try Self.standardError(of: [
            "ffmpeg", "-hide_banner", "-i", result.folder + "/clip.m3u8", "-map", "0:a", "-af", "volumedetect",
            "-f", "null", "-",
        ])
        #expect(volume.text.contains("max_volume: -91"), "\(volume.text)")
        #expect(try decodeErrors(result.folder) == "")
    }

    @Test func stillBecomesAClipOfTheRequestedLength() throws {
        let source = try MediaFixtures.jpeg(at: folder.subpath("still.jpg"), width: 800, height: 600)
        for kenBurns in [false, true] {
            let result = try encode(source, .still(seconds: 3, kenBurns: kenBurns), name: "clip-still-\(kenBurns)")
            #expect(result.reported.count == result.durations.count && result.durations.count == 2)
            #expect(abs(result.durations.reduce(0, +) - 3) <= Self.frame + 1e-3)
            try checkFormat(result.folder)
            try checkDurations(result.folder, seconds: 3)
            #expect(try decodeErrors(result.folder) == "")
        }
    }

    /// A motion photo (Samsung's or Google's layout) given as a still plays the movie it carries, read in place:
    /// the clip lasts the movie's 2 s, not the still's 3, and has its sound.
    @Test(arguments: [false, true])
    func motionPhotoPlaysItsMovie(google: Bool) throws {
        let still = try MediaFixtures.jpeg(at: folder.subpath("motion-still-\(google).jpg"), width: 800, height: 600)
        let movie = try MediaFixtures.video(at: folder.subpath("motion-\(google).mp4"), width: 640, height: 360, seconds: 2)
        let photo = folder.subpath("motion-photo-\(google).jpg")
        try StillFixtures.motionPhoto(at: photo, still: still, movie: movie, google: google)
        let result = try encode(photo, .still(seconds: 3), name: "clip-motion-\(google)")
        #expect(abs(result.durations.reduce(0, +) - 2) <= Self.frame + 1e-3, "\(result.durations)")
        try checkFormat(result.folder)
        try checkDurations(result.folder, seconds: 2)
        let volume = try Self.standardError(of: [
            "ffmpeg", "-hide_banner", "-i", result.folder + "/clip.m3u8", "-map", "0:a", "-af", "volumedetect",
            "-f", "null", "-",
        ])
        #expect(!volume.text.contains("max_volume: -91"), "the movie's sound is missing: \(volume.text)")
    }

    @Test(arguments: ["random", "truncated"])
    func damagedVideoThrowsAndLeavesNoClip(_ damage: String) throws {
        let source = folder.subpath("damaged-\(damage).mp4")
        if damage == "random" {
            var generator = SplitMix64(seed: 29)
            let bytes = (0..<200_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            try Data(bytes).write(to: URL(fileURLWithPath: source))
        } else {
            let whole = try MediaFixtures.video(at: folder.subpath("whole.mp4"), seconds: 3)
            let data = try Data(contentsOf: URL(fileURLWithPath: whole))
            try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: source))
        }
        let clip = folder.subpath("clip-\(damage)")
        var reported = 0
        let request = TapeClipRequest(sourcePath: source, source: .video(), folder: clip)
        let error = #expect(throws: MediaError.self) { try encoder.encode(request) { _, _ in reported += 1 } }
        #expect(error?.file == source)
        #expect(error?.reason.isEmpty == false)
        #expect(!Self.isComplete(clip))
    }

    @Test func interruptedEncodeStopsAndLeavesNoClip() throws {
        let source = try MediaFixtures.video(at: folder.subpath("interrupted.mp4"), seconds: 2)
        let clip = folder.subpath("clip-interrupted")
        let interrupt = MediaInterrupt()
        interrupt.interrupt()
        let request = TapeClipRequest(sourcePath: source, source: .video(), folder: clip)
        let error = #expect(throws: MediaError.self) { try encoder.encode(request, interrupt: interrupt) { _, _ in } }
        #expect(error?.category == .interrupted)
        #expect(!Self.isComplete(clip))
    }
}
