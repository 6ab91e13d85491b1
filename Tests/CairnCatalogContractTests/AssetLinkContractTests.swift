import CairnCatalog
import CairnCore
import CairnReconcileOracle
import Foundation
import Testing

/// What every catalog backend must do with Live Photo pairs, sidecars and albums: each test runs on every
/// `CatalogBackend` with the same expectations.
@Suite struct AssetLinkContractTests {
    static let moment = Date(timeIntervalSince1970: 1_795_000_000)

    static func checksum(_ number: Int) -> Checksum { Checksum(hex: String(format: "%040x", number))! }

    /// Assets 1...count (odd ones photos, even ones videos), each probed; asset 1 and 2 share a content identifier.
    static func stock(_ catalog: any CatalogUnderTest, count: Int) async throws {
        let assets = (1...count).map { number in
            AssetRecord(checksum: checksum(number), kind: number.isMultiple(of: 2) ? .video : .photo, size: 1000,
                        originalExtension: number.isMultiple(of: 2) ? "mov" : "heic", firstSourcePath: "DCIM/IMG_\(number)",
                        originalPath: "originals/00/\(number)", importedAt: moment, runID: "import-1")
        }
        let probes = assets.map { asset in
            let identifier = asset.checksum == checksum(1) || asset.checksum == checksum(2) ? #","contentIdentifier":"A-1""# : ""
            return MediaProbeRecord(checksum: asset.checksum, container: asset.originalExtension, width: 100, height: 100,
                                    durationSeconds: asset.kind == .video ? 2.5 : nil, captureDate: nil, cameraMake: nil,
                                    cameraModel: nil, latitude: nil, longitude: nil, altitude: nil, codec: nil,
                                    probeJSON: #"{"container":"\#(asset.originalExtension)"\#(identifier)}"#, probedAt: moment)
        }
        try await catalog.saveImportItemStates([], with: StageRows(assets: assets, probes: probes))
    }

    @Test(arguments: CatalogBackend.allCases)
    func aPairIsMadeOnceAndItsPartsLeaveTheCandidates(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            try await Self.stock(catalog, count: 4)
            let candidates = try await catalog.unpairedAssets(after: nil, limit: 10)
            #expect(candidates.map(\.checksum) == (1...4).map(Self.checksum))
            #expect(try await catalog.unpairedAssets(after: Self.checksum(2), limit: 1).map(\.checksum) == [Self.checksum(3)])
            #expect(Set(candidates.map(\.checksum)) == Set((1...4).map(Self.checksum)))
            let first = try #require(candidates.first { $0.checksum == Self.checksum(1) })
            #expect(first.kind == .photo && first.firstSourcePath == "DCIM/IMG_1" && first.contentIdentifier == "A-1")
            #expect(candidates.first { $0.checksum == Self.checksum(2) }?.durationSeconds == 2.5)
            #expect(candidates.first { $0.checksum == Self.checksum(3) }?.contentIdentifier == nil)

            let pair = AssetPairRecord(still: Self.checksum(1), motion: Self.checksum(2), basis: "content identifier",
                                       pairedAt: Self.moment)
            // A second pair naming a part already paired is left out.
            try await catalog.savePairs([pair, AssetPairRecord(still: Self.checksum(3), motion: Self.checksum(2),
                                                               basis: "name and time", pairedAt: Self.moment)])
            #expect(try await catalog.pair(of: Self.checksum(2)) == pair)
            #expect(try await catalog.pair(of: Self.checksum(1)) == pair)
            #expect(try await catalog.pair(of: Self.checksum(3)) == nil)
            #expect(try await catalog.allPairs() == [pair])
            #expect(try await catalog.unpairedAssets(after: nil, limit: 10).map(\.checksum) == [Self.checksum(3), Self.checksum(4)])
            // A new pair waits for its destination's link until it is recorded as made.
            #expect(try await catalog.pairsAwaitingLink() == [pair])
            let linkedAt = Self.moment.addingTimeInterval(60)
            try await catalog.markPairsLinked([pair.still], at: linkedAt)
            #expect(try await catalog.pairsAwaitingLink().isEmpty)
            #expect(try await catalog.pair(of: Self.checksum(1))?.linkedAt == linkedAt)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aSidecarIsLinkedOnceAndFillsOnlyWhatTheFileLacked(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            try await Self.stock(catalog, count: 1)
            let asset = Self.checksum(1)
            let xmp = SidecarRecord(checksum: Self.checksum(100), asset: asset, kind: "xmp", path: "sidecars/00/b.xmp",
                                    sourcePath: "DCIM/IMG_1.xmp", sourceSize: 812, sourceModificationTimeNanoseconds: 17,
                                    linkedAt: Self.moment)
            let takeout = SidecarRecord(checksum: Self.checksum(101), asset: asset, kind: "takeout", path: "sidecars/00/a.json",
                                        sourcePath: "IMG_1.HEIC.json", linkedAt: Self.moment)
            try await catalog.linkSidecar(xmp)
            try await catalog.linkSidecar(takeout)
            var again = xmp
            again.path = "elsewhere.xmp"
            try await catalog.linkSidecar(again)
            #expect(try await catalog.sidecars(of: asset) == [takeout, xmp])
            #expect(try await catalog.sidecars(of: Self.checksum(2)).isEmpty)

            let taken = Self.moment.addingTimeInterval(-86_400)
            try await catalog.fillFromSidecar(asset, captureDate: taken, latitude: 46.5, longitude: nil,
                                              probeJSON: #"{"container":"heic","from":"xmp"}"#)
            let probe = try #require(try await catalog.mediaProbe(asset))
            #expect(probe.captureDate == taken && probe.latitude == 46.5 && probe.longitude == nil)
            #expect(probe.probeJSON == #"{"container":"heic","from":"xmp"}"#)
            try await catalog.fillFromSidecar(asset, captureDate: Self.moment, latitude: 1, longitude: 2, probeJSON: "{}")
            let refilled = try #require(try await catalog.mediaProbe(asset))
            #expect(refilled.captureDate == taken && refilled.latitude == 46.5 && refilled.longitude == 2)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func anAlbumIsKeyedByItsFolderAndItsMembersOnlyGrow(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            try await Self.stock(catalog, count: 4)
            let source = try await catalog.sourceID(forRoot: "/takeout")
            func album(_ folder: String, _ title: String, date: Date?) -> AlbumRecord {
                AlbumRecord(sourceID: source, folder: folder, title: title, description: nil, date: date,
                            metadataChecksum: Self.checksum(200), metadataPath: "sidecars/00/\(folder).json",
                            metadataSourcePath: "\(folder)/metadata.json", updatedAt: Self.moment)
            }
            let trip = try await catalog.saveAlbum(album("Trip", "Trip to Lyon", date: Self.moment),
                                                   members: [Self.checksum(1), Self.checksum(2), Self.checksum(99)])
            #expect(trip.created && trip.membersAdded == 2, "a member the library does not hold is left out")
            var renamed = album("Trip", "Lyon 2026", date: Self.moment)
            renamed.description = "with the bikes"
            let again = try await catalog.saveAlbum(renamed, members: [Self.checksum(2), Self.checksum(3)])
            #expect(again.id == trip.id && !again.created && again.membersAdded == 1)
            let undated = try await catalog.saveAlbum(album("Misc", "after all", date: nil), members: [Self.checksum(1)])
            let early = try await catalog.saveAlbum(album("Old", "Zoo", date: Self.moment.addingTimeInterval(-1000)), members: [])

            let all = try await catalog.albums()
            #expect(all.map(\.album.id) == [early.id, trip.id, undated.id])
            #expect(all.map(\.members) == [0, 3, 1])
            #expect(all[1].album.title == "Lyon 2026" && all[1].album.description == "with the bikes")
            #expect(try await catalog.albums(of: Self.checksum(1)).map(\.title) == ["Lyon 2026", "after all"])
            #expect(try await catalog.albums(titled: "lyon 2026").map(\.id) == [trip.id])
            #expect(try await catalog.albums(titled: "Lyon").isEmpty)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func tagsAreKeptOnceByContentAndFoundInAnyCase(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            try await Self.stock(catalog, count: 3)
            let session = "cairn/import/2026-11-28T1530"
            try await catalog.tag([Self.checksum(1), Self.checksum(2)], with: ["Trip", session], at: Self.moment)
            try await catalog.tag([Self.checksum(1)], with: ["Trip", "Family"], at: Self.moment.addingTimeInterval(60))
            try await catalog.tag([], with: ["Nothing"], at: Self.moment)
            #expect(try await catalog.tags(of: Self.checksum(1)) == ["Family", "Trip", session])
            #expect(try await catalog.tags(of: Self.checksum(2)) == ["Trip", session])
            #expect(try await catalog.tags(of: Self.checksum(3)).isEmpty)
            #expect(try await catalog.assets(taggedWith: "trip") == [Self.checksum(1), Self.checksum(2)])
            #expect(try await catalog.assets(taggedWith: "FAMILY") == [Self.checksum(1)])
            #expect(try await catalog.assets(taggedWith: "Nothing").isEmpty)
        }
    }
}
