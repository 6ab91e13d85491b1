import CairnCatalog
import CairnCore
import CairnReconcileOracle
import CairnTesting
import Foundation
import Testing

@testable import CairnStages

/// Pairing reads the library's unpaired assets as a stream and keeps only those that can pair, so a library of a
/// million ordinary stills costs it no line per still.
@Suite struct LivePhotoCandidateTests {
    func checksum(_ seed: UInt8) -> Checksum { Checksum(bytes: [UInt8](repeating: seed, count: 20))! }

    @Test func onlyAssetsThatCanPairAreKept() async throws {
        let directory = try TemporaryDirectory()
        let catalog = try SQLiteCatalog(path: directory.subpath("catalog.sqlite"))
        let taken = Date(timeIntervalSince1970: 1_700_000_000)
        func add(_ seed: UInt8, _ path: String, _ kind: MediaKind, identifier: String? = nil, seconds: Double? = nil) async throws {
            let sum = checksum(seed)
            try await catalog.insertAssets([AssetRecord(checksum: sum, kind: kind, size: 1, originalExtension: "",
                                                  firstSourcePath: path, originalPath: "originals/\(seed)",
                                                  importedAt: taken, runID: nil)])
            let json = identifier.map { "{\"contentIdentifier\":\"\($0)\"}" } ?? "{}"
            try await catalog.saveMediaProbe(MediaProbeRecord(
                checksum: sum, container: "x", width: 1, height: 1, durationSeconds: seconds, captureDate: taken,
                cameraMake: nil, cameraModel: nil, latitude: nil, longitude: nil, altitude: nil, codec: nil,
                probeJSON: json, probedAt: taken))
        }
        try await add(1, "a/IMG_1.JPG", .photo, identifier: "X")
        try await add(2, "a/IMG_1.MOV", .video, identifier: "X", seconds: 2)
        for seed in UInt8(10)...20 { try await add(seed, "a/plain\(seed).jpg", .photo) }
        try await add(3, "b/IMG_9.MOV", .video, seconds: 2)
        try await add(4, "b/IMG_9.JPG", .photo)
        try await add(5, "b/long.mov", .video, seconds: 60)
        try await add(6, "b/long.jpg", .photo)

        let kept = try await LivePhotoPairing.candidates(catalog)
        #expect(Set(kept.map(\.checksum)) == [checksum(1), checksum(2), checksum(3), checksum(4)])
        let pairs = try await LivePhotoPairing.pair(catalog: catalog, now: taken)
        #expect(Set(pairs.map(\.basis)) == ["content identifier", "name and time"])
        #expect(Set(pairs.map(\.still)) == [checksum(1), checksum(4)])
    }
}
