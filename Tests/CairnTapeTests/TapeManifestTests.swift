@testable import CairnTape
import CairnCore
import Foundation
import Testing

@Suite("Tape manifest")
struct TapeManifestTests {
    static func manifest() -> TapeManifest {
        // Whole seconds: ISO 8601 keeps no fraction.
        let created = Date(timeIntervalSince1970: 1_714_557_600)  // 2024-05-01T10:00:00Z
        let clips = (0..<3).map { index in
            TapeManifest.Clip(contentSHA1: String(repeating: "\(index)", count: 40), kind: index == 1 ? .video : .still,
                              sourcePath: "originals/2024/05/IMG_000\(index).HEIC",
                              captureTime: index == 2 ? nil : created.addingTimeInterval(Double(index) * 60),
                              folderName: String(repeating: "a\(index)", count: 8))
        }
        return TapeManifest(name: "may", created: created, updated: created.addingTimeInterval(30), clips: clips)
    }

    /// The manifest follows a real build: a ready clip, a cut-short one, a skipped one, then playable and finished.
    static func builtManifest() -> TapeManifest {
        var manifest = manifest()
        var core = TapeBuildCore(clipURIPrefixes: manifest.clips.map { "../.clips/\($0.folderName)" })
        var events = core.clipFinished(clip: 0, how: .reused(segmentDurations: [2, 1.5]))
        events += core.segmentWritten(clip: 1, durationSeconds: 2)
        events += core.clipFailed(clip: 1, reason: "decoder error at 2.1 s")
        events += core.clipFailed(clip: 2, reason: "unreadable")
        for event in events { manifest.apply(event) }
        return manifest
    }

    @Test func applyingTheBuildsEventsRecordsEachClipsFate() {
        let manifest = Self.builtManifest()
        #expect(manifest.clips.map(\.state) == [.ready, .cutShort(reason: "decoder error at 2.1 s"), .skipped(reason: "unreadable")])
        #expect(manifest.clips[0].origin == .reused && manifest.clips[1].origin == nil)
        #expect(manifest.clips.map(\.segmentDurations) == [[2, 1.5], [2], []])
        #expect(manifest.playable && manifest.finished)
        #expect(manifest.durationSeconds == 5.5)
    }

    @Test func itRoundTripsThroughJSON() throws {
        let manifest = Self.builtManifest()
        let data = try manifest.jsonData()
        #expect(try TapeManifest(jsonData: data) == manifest)
        #expect(try TapeManifest(jsonData: Self.manifest().jsonData()) == Self.manifest())
    }

    @Test func itsJSONIsPlain() throws {
        let data = try Self.builtManifest().jsonData()
        let text = String(decoding: data, as: UTF8.self)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["created"] as? String == "2024-05-01T10:00:00Z")
        #expect(object["formatIdentity"] as? String == TapeFormat.standard.identity)
        let clips = try #require(object["clips"] as? [[String: Any]])
        #expect(clips.map { $0["state"] as? String } == ["ready", "cutShort", "skipped"])
        #expect(clips[2]["reason"] as? String == "unreadable")
        #expect(clips[0]["reason"] == nil && clips[2]["captureTime"] == nil)
        #expect(clips[1]["captureTime"] as? String == "2024-05-01T10:01:00Z")
        // Sorted keys: the top level reads in alphabetical order.
        let keys = ["clips", "created", "finished", "formatIdentity", "name", "playable", "updated"]
        let positions = keys.compactMap { text.range(of: "\"\($0)\"")?.lowerBound }
        #expect(positions.count == keys.count && positions == positions.sorted())
        #expect(text.contains("originals/2024/05/IMG_0000.HEIC"), "slashes are not escaped")
    }
}
