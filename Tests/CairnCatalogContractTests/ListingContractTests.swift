import CairnCatalog
import CairnCore
import CairnReconcileOracle
import Foundation
import Testing

/// What every catalog backend must list alike: the library's assets and probes as a whole, its sources, the content
/// they hold, the last run that ended well. Each test runs on every `CatalogBackend`.
@Suite struct ListingContractTests {
    static func checksum(_ number: Int) -> Checksum { Checksum(hex: String(format: "%040x", number))! }
    static let moment = Date(timeIntervalSince1970: 1_795_000_000)

    static func asset(_ number: Int, runID: String) -> AssetRecord {
        AssetRecord(checksum: checksum(number), kind: .photo, size: 10, originalExtension: "jpg", firstSourcePath: "\(number).jpg",
                    originalPath: "originals/00/\(number).jpg", importedAt: moment, runID: runID)
    }

    @Test(arguments: CatalogBackend.allCases)
    func theLibrarysAssetsSourcesAndRunsAreListedAlike(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            var assets = [Self.asset(3, runID: "import-1"), Self.asset(1, runID: "import-2"), Self.asset(2, runID: "import-1")]
            // An asset a server keeps: no file in the folder, the server's id in a column of its own.
            assets[2].originalPath = ""
            assets[2].remoteID = "9f0c2d3e-immich-asset"
            try await catalog.insertAssets(assets)
            #expect(try await catalog.asset(Self.checksum(2))?.remoteID == "9f0c2d3e-immich-asset")
            #expect(try await catalog.asset(Self.checksum(1))?.remoteID == nil)
            var moved = assets[0]
            moved.originalPath = "elsewhere"
            try await catalog.insertAssets([moved])
            #expect(try await catalog.assetCount() == 3)
            #expect(try await catalog.assetChecksums() == Set((1...3).map(Self.checksum)))
            #expect(try await catalog.allAssets() == [assets[1], assets[2], assets[0]])
            #expect(try await catalog.assets(broughtInBy: "import-1") == [assets[2], assets[0]])

            let takeout = MediaProbeRecord(checksum: Self.checksum(3), container: "jpeg", width: nil, height: nil,
                                           durationSeconds: nil, captureDate: nil, cameraMake: nil, cameraModel: nil,
                                           latitude: nil, longitude: nil, altitude: nil, codec: nil,
                                           probeJSON: #"{"sidecars":["takeout-json"]}"#, probedAt: Self.moment)
            var plain = takeout
            plain.checksum = Self.checksum(2)
            plain.probeJSON = "{}"
            try await catalog.saveImportItemStates([], with: StageRows(probes: [takeout, plain]))
            #expect(try await catalog.mediaProbeCount() == 2)
            #expect(try await catalog.mediaProbes(ofRun: "import-1", mentioning: "takeout-json") == [takeout])
            #expect(try await catalog.mediaProbes(ofRun: "import-2", mentioning: "takeout-json").isEmpty)

            let photos = try await catalog.sourceID(forRoot: "/photos")
            let camera = try await catalog.sourceID(forRoot: "/camera")
            #expect(try await catalog.sources().map(\.rootPath) == ["/photos", "/camera"])
            #expect(try await catalog.sources().map(\.id) == [photos, camera])
            #expect(try await catalog.existingSourceID(forRoot: "/camera") == camera)
            #expect(try await catalog.existingSourceID(forRoot: "/nowhere") == nil)
            #expect(try await catalog.sources().count == 2, "looking a source up does not register it")

            try await catalog.updateSnapshot(sourceID: camera, upserting: [
                SourceFile(relativePath: "a.jpg", fingerprint: FileFingerprint(device: 1, inode: 1, size: 10, modificationTimeNanoseconds: 1),
                           checksum: Self.checksum(2), kind: .photo),
            ], removing: [])
            #expect(try await catalog.heldByAnySource([Self.checksum(1), Self.checksum(2)]) == [Self.checksum(2)])

            #expect(try await catalog.lastRun(endedIn: [.success]) == nil)
            var good = RunRecord(id: "run-a", command: "import", sourceID: photos, startedAt: Self.moment)
            good.outcome = .success
            good.endedAt = Self.moment.addingTimeInterval(10)
            var failed = RunRecord(id: "run-b", command: "sync", sourceID: photos, startedAt: Self.moment.addingTimeInterval(60))
            failed.outcome = .failed
            for run in [good, failed] {
                try await catalog.startRun(run)
                try await catalog.finishRun(run, failures: [])
            }
            #expect(try await catalog.lastRun(endedIn: [.success]) == good)
        }
    }
}
