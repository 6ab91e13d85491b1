import CairnTesting
import Foundation
import Testing

/// Issue 61: a still beside a same-named movie waits for Live Photo pairing before its clip is made. That wait is a
/// phase of the lanes, so a run stopped there (SIGINT, or SIGKILL) leaves the still unfinished, not ready, and the
/// next run makes the clip of every still that is not a Live Photo.
@Suite struct DeferredClipTests {
    /// A Live Photo (still and movie share a content identifier) and `decoys` stills each beside an unrelated clip
    /// of the same name.
    static func source(decoys: Int) throws -> TemporaryDirectory {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        try MediaFixtures.livePhoto(in: folder.subpath("src"), stem: "LIVE")
        for index in 0..<decoys {
            var plain = ExifFields()
            plain.dateTimeOriginal = "2023:07:14 11:0\(index):00"
            try MediaFixtures.jpegWithExif(at: folder.subpath("src/DECOY_\(index).JPG"), width: 320 + 8 * index,
                                           orientation: 1, exif: plain)
            try MediaFixtures.video(at: folder.subpath("src/DECOY_\(index).MP4"), width: 160, height: 96, seconds: 1,
                                    creationTime: "2023-07-14T11:0\(index):00.000000Z")
        }
        return folder
    }

    static func clips(_ name: String, library: String) throws -> (count: Int, state: String?) {
        let result = try CairnBinary.run(["asset", name, "--library", library, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let derived = object["derived"] as? [[String: Any]] ?? []
        return (derived.filter { $0["role"] as? String == "clip" }.count, object["state"] as? String)
    }

    @Test(arguments: [SIGINT, SIGKILL])
    func aRunStoppedBeforePairingLeavesNoStillWithoutItsClip(_ signal: Int32) throws {
        let decoys = 6
        let folder = try Self.source(decoys: decoys)
        let library = folder.subpath("lib"), marker = folder.subpath("before-pairing")
        let run = try ServiceProcess(CairnBinary.path, ["import", folder.subpath("src"), "--library", library, "--plain"],
                                     environment: ["CAIRN_TEST_PAUSE_BEFORE_PAIRING": marker],
                                     logPath: folder.subpath("run1.log"))
        defer { run.stop() }
        // The lanes are done and pairing has not run: stop the import there.
        let deadline = Date().addingTimeInterval(120)
        while !FileManager.default.fileExists(atPath: marker), Date() < deadline { usleep(20_000) }
        #expect(FileManager.default.fileExists(atPath: marker), "the run never reached pairing:\n\(run.output)")
        run.send(signal)
        let status = try run.waitForExit()
        #expect(status == (signal == SIGKILL ? 128 + SIGKILL : 130), "\(run.output)")
        // The waiting stills are not ready: the run did not reach their clip question.
        for index in 0..<decoys {
            let stopped = try Self.clips("DECOY_\(index).JPG", library: library)
            #expect(stopped.count == 0 && stopped.state != "ready", "DECOY_\(index).JPG: \(stopped)")
        }

        let rerun = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain"])
        #expect(rerun.status == 0, "\(rerun.standardOutput)\(rerun.standardError)")
        #expect(rerun.standardOutput.contains("made \(decoys) clips after pairing"), "\(rerun.standardOutput)")
        for index in 0..<decoys {
            let done = try Self.clips("DECOY_\(index).JPG", library: library)
            #expect(done.count == 1 && done.state == "ready", "DECOY_\(index).JPG: \(done)")
        }
        // A Live Photo's clip is its movie: its still gets none, and is ready.
        let live = try Self.clips("LIVE.JPG", library: library)
        #expect(live.count == 0 && live.state == "ready", "\(live)")
        let status2 = try CairnBinary.run(["status", "--library", library])
        #expect(status2.standardOutput.contains("Up to date"), "\(status2.standardOutput)")
    }
}
