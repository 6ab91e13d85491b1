import CairnTesting
import Foundation
import Glibc
import Testing

/// `cairn tape build|list|show|remove` on a real library: the playlist grows by appending and FFmpeg decodes it,
/// the single file lasts as long as the clips, a rebuild makes only what is new, and a clip that cannot be made is
/// skipped with its reason while the tape goes on.
@Suite struct TapeCommandTests {
    /// Photos and videos taken a minute apart, imported without clips (stills become clips from their pictures),
    /// with `importing` added to the import's arguments.
    static func library(importing: [String] = [], environment: [String: String] = [:]) throws
        -> (folder: TemporaryDirectory, root: String) {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        try MediaFixtures.jpegWithExif(at: folder.subpath("src/a.jpg"), width: 640, height: 480, orientation: 1,
                                       exif: Self.taken("2021:06:01 10:00:00"))
        try MediaFixtures.video(at: folder.subpath("src/b.mp4"), width: 640, height: 360, seconds: 2,
                                creationTime: "2021-06-01T10:01:00.000000Z")
        try MediaFixtures.jpegWithExif(at: folder.subpath("src/c.jpg"), width: 480, height: 640, orientation: 6,
                                       exif: Self.taken("2021:06:01 10:02:00"))
        try MediaFixtures.rotatedPhoneVideo(at: folder.subpath("src/d.mp4"), seconds: 1)
        let root = folder.subpath("lib")
        let imported = try CairnBinary.run(["import", folder.subpath("src"), "--library", root, "--clips", "off", "--quiet"]
                                           + importing, environment: environment)
        guard imported.status == 0 else { throw FixtureError(description: "import: \(imported.standardError)") }
        return (folder, root)
    }

    static func taken(_ date: String) -> ExifFields {
        var fields = ExifFields()
        fields.dateTimeOriginal = date
        return fields
    }

    static func events(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// A build's `tapeFinished` event.
    static func finished(_ events: [[String: Any]]) -> [String: Any]? {
        events.last { $0["event"] as? String == "tapeFinished" }
    }

    /// FFmpeg decodes every segment `playlist` lists; `-xerror` makes any decoding error fail it (and the throw).
    static func decodesWithoutError(_ playlist: String) throws {
        try ExternalTool.run(["ffmpeg", "-hide_banner", "-v", "error", "-xerror", "-i", playlist, "-f", "null", "-"])
    }

    static func seconds(ofMedia path: String) throws -> Double {
        let text = String(decoding: try ExternalTool.run(["ffprobe", "-v", "error", "-show_entries", "format=duration",
                                                           "-of", "csv=p=0", path]), as: UTF8.self)
        return try #require(Double(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test func aTapeGrowsByAppendingPlaysAndARebuildMakesOnlyWhatIsNew() throws {
        let (folder, root) = try Self.library()
        let playlist = root + "/tapes/trip/playlist.m3u8"
        // Every version of the playlist seen while the build runs is a prefix of the next one seen.
        let watcher = PlaylistWatcher(path: playlist)
        let build = try CairnBinary.run(["tape", "build", "trip", "--library", root, "--json"])
        let versions = watcher.stop()
        #expect(build.status == 0, "\(build.standardError)")
        let events = try Self.events(build.standardOutput)
        let names = events.compactMap { $0["event"] as? String }
        // A run like an import's: its NDJSON is its run log's, line for line.
        #expect(names.prefix(2) == ["runStart", "tapeStarted"] && names.suffix(2) == ["tapeFinished", "runEnd"], "\(names)")
        let runID = try #require(events.first?["runId"] as? String)
        let log = try String(contentsOfFile: root + "/runs/\(runID).ndjson", encoding: .utf8)
        #expect(log == build.standardOutput, "the run log holds what --json printed")
        #expect(events.last?["outcome"] as? String == "success"
                && (events.last?["counts"] as? [String: Any])?["ready"] as? Int == 4)
        let playable = try #require(names.firstIndex(of: "tapePlayable"))
        #expect(names.filter { $0 == "tapeSegment" }.count >= 4)
        #expect(names.firstIndex(of: "tapeSegment")! < playable)
        let finished = try #require(Self.finished(events))
        #expect(finished["clips"] as? Int == 4 && finished["encoded"] as? Int == 4 && finished["reused"] as? Int == 0)

        let final = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(final.hasSuffix("#EXT-X-ENDLIST\n") && final.contains("#EXT-X-PLAYLIST-TYPE:EVENT"))
        #expect(final.components(separatedBy: "#EXT-X-DISCONTINUITY").count == 4)
        for (earlier, later) in zip(versions, versions.dropFirst() + [final]) {
            #expect(later.hasPrefix(earlier), "a playlist version was rewritten, not appended to")
        }
        // What every version listed decodes (its segments are the final ones, so a version copied beside the
        // playlist reads exactly what a player reading it then would have read). The copy is ended, or FFmpeg
        // would wait for a growing playlist to grow.
        #expect(versions.count >= 3, "\(versions.count) versions seen")
        for (number, version) in versions.enumerated() where version.contains("#EXTINF") {
            let copy = root + "/tapes/trip/version-\(number).m3u8"
            let ended = version.hasSuffix("#EXT-X-ENDLIST\n") ? version : version + "#EXT-X-ENDLIST\n"
            try ended.write(toFile: copy, atomically: true, encoding: .utf8)
            try Self.decodesWithoutError(copy)
            try FileManager.default.removeItem(atPath: copy)
        }
        // FFmpeg's HLS demuxer reads every segment the playlist lists, without an error.
        try Self.decodesWithoutError(playlist)
        // The single file lasts as long as its clips: two 3 s stills, a 2 s and a 1 s video.
        let movie = root + "/tapes/trip/tape.mp4"
        let tapeSeconds = try #require(finished["tapeSeconds"] as? Double)
        #expect(abs(tapeSeconds - 9) < 0.2, "\(tapeSeconds)")
        #expect(abs(try Self.seconds(ofMedia: movie) - tapeSeconds) < 0.15)

        // Nothing new: nothing is encoded again. One more photo: one clip is.
        let again = try Self.events(try CairnBinary.run(["tape", "build", "trip", "--library", root, "--json"]).standardOutput)
        #expect(Self.finished(again)?["encoded"] as? Int == 0 && Self.finished(again)?["reused"] as? Int == 4)
        try MediaFixtures.jpegWithExif(at: folder.subpath("src/e.jpg"), width: 640, height: 480, orientation: 1,
                                       exif: Self.taken("2021:06:01 10:05:00"))
        #expect(try CairnBinary.run(["import", folder.subpath("src"), "--library", root, "--clips", "off", "--quiet"]).status == 0)
        let added = try Self.events(try CairnBinary.run(["tape", "build", "trip", "--library", root, "--json"]).standardOutput)
        let addedEnd = Self.finished(added)
        #expect(addedEnd?["encoded"] as? Int == 1 && addedEnd?["reused"] as? Int == 4 && addedEnd?["clips"] as? Int == 5)

        let list = try CairnBinary.run(["tape", "list", "--library", root])
        #expect(list.status == 0 && list.standardOutput.contains("trip  5 clips"), "\(list.standardOutput)")
        let show = try CairnBinary.run(["tape", "show", "trip", "--library", root])
        #expect(show.standardOutput.contains("finished") && show.standardOutput.contains("b.mp4"), "\(show.standardOutput)")
        let removed = try CairnBinary.run(["tape", "remove", "trip", "--library", root])
        #expect(removed.status == 0 && !FileManager.default.fileExists(atPath: root + "/tapes/trip"))
        let clips = try FileManager.default.contentsOfDirectory(atPath: root + "/tapes/.clips")
        #expect(clips.isEmpty, "\(clips)")
    }

    @Test func aDamagedVideoIsSkippedWithItsReasonAndTheTapeStillPlays() throws {
        let (folder, root) = try Self.library()
        defer { withExtendedLifetime(folder) {} }  // its deinit removes the library
        // The library's copy of b.mp4 rots: its second half is gone.
        let asset = try CairnBinary.run(["asset", "b.mp4", "--library", root, "--json"])
        let original = try #require(try Self.events(asset.standardOutput).first?["original"] as? String)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: original))
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: original))

        let build = try CairnBinary.run(["tape", "build", "rotten", "--library", root, "--json"])
        #expect(build.status == 3, "\(build.standardOutput)\(build.standardError)")
        let events = try Self.events(build.standardOutput)
        let skipped = events.filter { $0["event"] as? String == "tapeClipSkipped" }
        #expect(skipped.count == 1 && (skipped.first?["path"] as? String)?.hasSuffix("b.mp4") == true, "\(skipped)")
        #expect(Self.finished(events)?["skipped"] as? Int == 1 && Self.finished(events)?["encoded"] as? Int == 3)
        #expect(events.last?["outcome"] as? String == "someFailed"
                && (events.last?["counts"] as? [String: Any])?["failed"] as? Int == 1, "the run's end counts the clip left out")
        let playlist = root + "/tapes/rotten/playlist.m3u8"
        try Self.decodesWithoutError(playlist)
        let show = try CairnBinary.run(["tape", "show", "rotten", "--library", root])
        #expect(show.standardOutput.contains("skipped:") || show.standardOutput.contains("cut short"), "\(show.standardOutput)")
    }

    /// Per clip of a built tape: video frames follow each other with no gap or overlap, and sound and picture
    /// start and end within one frame of each other, so they stay together across every boundary.
    @Test func soundAndPictureStayTogetherAcrossEveryClipBoundary() throws {
        let (folder, root) = try Self.library()
        defer { withExtendedLifetime(folder) {} }  // its deinit removes the library
        let build = try CairnBinary.run(["tape", "build", "sync", "--library", root, "--quiet"])
        #expect(build.status == 0, "\(build.standardError)")
        let manifest = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: root + "/tapes/sync/tape.json"))) as? [String: Any])
        let clips = try #require(manifest["clips"] as? [[String: Any]])
        #expect(clips.count == 4)
        let frame = 1.0 / 30
        var tapeSeconds = 0.0
        for clip in clips {
            let key = try #require(clip["folderName"] as? String)
            let packets = try Self.packets(root + "/tapes/.clips/" + key + "/clip.m3u8")
            let video = packets.filter(\.isVideo).sorted { $0.start < $1.start }
            let audio = packets.filter { !$0.isVideo }.sorted { $0.start < $1.start }
            try #require(!video.isEmpty && !audio.isEmpty, "\(key): \(video.count) video, \(audio.count) audio packets")
            for (before, after) in zip(video, video.dropFirst()) {
                #expect(abs(after.start - before.start - frame) < 0.001, "\(key): frame at \(before.start) then \(after.start)")
            }
            for (before, after) in zip(audio, audio.dropFirst()) {
                #expect(abs(after.start - before.end) < 0.001, "\(key): sound gap at \(after.start)")
            }
            // AAC's priming makes the sound start up to one encoder frame (21 ms) early: within a video frame.
            #expect(abs(video[0].start - audio[0].start) <= frame, "\(key): picture at \(video[0].start), sound at \(audio[0].start)")
            #expect(abs(video.last!.end - audio.last!.end) <= frame,
                    "\(key): picture ends at \(video.last!.end), sound at \(audio.last!.end)")
            tapeSeconds += video.last!.end - video[0].start
        }
        // The single file: picture frames continuous across the joins, sound without a gap or overlap over a
        // frame, and both ending together.
        let movie = try Self.packets(root + "/tapes/sync/tape.mp4")
        let pictures = movie.filter(\.isVideo).sorted { $0.start < $1.start }
        let sound = movie.filter { !$0.isVideo }.sorted { $0.start < $1.start }
        #expect(abs(Double(pictures.count) * frame - tapeSeconds) < frame, "\(pictures.count) frames for \(tapeSeconds) s")
        for (before, after) in zip(pictures, pictures.dropFirst()) {
            #expect(abs(after.start - before.start - frame) < 0.001, "tape.mp4: frame at \(before.start) then \(after.start)")
        }
        for (before, after) in zip(sound, sound.dropFirst()) {
            #expect(abs(after.start - before.end) <= frame, "tape.mp4: sound at \(after.start) after one ending \(before.end)")
        }
        #expect(abs((pictures.last?.end ?? 0) - (sound.last?.end ?? 0)) <= frame)
    }

    /// A build killed with SIGKILL once its first clip is ready, then run again: every clip that was whole is
    /// reused, only the others are encoded, and the tape ends whole.
    @Test func aBuildKilledMidwayResumesWithoutEncodingAFinishedClipAgain() throws {
        let (folder, root) = try Self.library()
        defer { withExtendedLifetime(folder) {} }  // its deinit removes the library
        // Long clips, so the build is still at work when its first clip is ready.
        let arguments = ["tape", "build", "killed", "--library", root, "--json", "--still-seconds", "12",
                         "--max-clip-seconds", "12"]
        let killed = try signalledOnceOutputShows(arguments, signal: SIGKILL, timeout: 120) { $0.contains("\"tapeClipReady\"") }
        #expect(killed.sawLine && killed.reason == .uncaughtSignal, "the build ended before it was killed")

        let clipsFolder = root + "/tapes/.clips"
        let whole = try FileManager.default.contentsOfDirectory(atPath: clipsFolder).filter {
            let playlist = (try? String(contentsOfFile: clipsFolder + "/" + $0 + "/clip.m3u8", encoding: .utf8)) ?? ""
            return playlist.contains("#EXT-X-ENDLIST")
        }
        #expect((1..<4).contains(whole.count), "\(whole.count) whole clips when killed")
        let rerun = try CairnBinary.run(arguments)
        #expect(rerun.status == 0, "\(rerun.standardError)")
        let finished = try #require(Self.finished(try Self.events(rerun.standardOutput)))
        #expect(finished["reused"] as? Int == whole.count && finished["encoded"] as? Int == 4 - whole.count,
                "\(finished)")
        try Self.decodesWithoutError(root + "/tapes/killed/playlist.m3u8")
    }

    struct Packet {
        let isVideo: Bool
        let start: Double
        let duration: Double
        var end: Double { start + duration }
    }

    /// Every packet of `path` (a playlist or a file), by ffprobe.
    static func packets(_ path: String) throws -> [Packet] {
        let text = String(decoding: try ExternalTool.run([
            "ffprobe", "-v", "error", "-show_entries", "packet=codec_type,pts_time,duration_time", "-of", "csv=p=0", path,
        ]), as: UTF8.self)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 3, let start = Double(fields[1]) else { return nil }
            let isVideo = fields[0] == "video"
            // The HLS demuxer sometimes leaves a duration unknown: one video frame, or one AAC frame, then.
            let duration = Double(fields[2]) ?? (isVideo ? 1.0 / 30 : 1024.0 / 48_000)
            return Packet(isVideo: isVideo, start: start, duration: duration)
        }
    }

    @Test func aNameThatIsNoFolderNameAndAnEmptySelectionAreRefusedClearly() throws {
        let (folder, root) = try Self.library()
        defer { withExtendedLifetime(folder) {} }  // its deinit removes the library
        let badName = try CairnBinary.run(["tape", "build", "../x", "--library", root])
        #expect(badName.status == 64 && badName.standardError.contains("no slash"), "\(badName.standardError)")
        let empty = try CairnBinary.run(["tape", "build", "none", "--library", root, "--since", "2030-01-01"])
        #expect(empty.status == 1 && empty.standardError.contains("matches the selection"), "\(empty.standardError)")
        let missing = try CairnBinary.run(["tape", "show", "nothing", "--library", root])
        #expect(missing.status == 1 && missing.standardError.contains("no such tape"))
    }
}

/// Copies a file each time its contents change, from another thread, until stopped.
final class PlaylistWatcher: @unchecked Sendable {
    private let lock = NSLock()
    private var versions: [String] = []
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    init(path: String) {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                    lock.withLock { if versions.last != text { versions.append(text) } }
                }
                usleep(2_000)
            }
            done.signal()
        }
    }

    func stop() -> [String] {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { versions }
    }
}
