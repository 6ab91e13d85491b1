import CairnCatalog
import CairnCore
import CairnReconcileOracle
import Foundation
import Testing

/// What every catalog backend must answer alike when a person asks about the library (`cairn asset`, `cairn ls`,
/// tapes): where content was seen, what a path holds, the assets by capture time with their filters, an item's state.
@Suite struct BrowseContractTests {
    static func checksum(_ number: Int) -> Checksum { Checksum(hex: String(format: "%040x", number))! }
    static let moment = Date(timeIntervalSince1970: 1_795_000_000)

    static func asset(_ number: Int, kind: MediaKind = .photo) -> AssetRecord {
        AssetRecord(checksum: checksum(number), kind: kind, size: Int64(number), originalExtension: "jpg",
                    firstSourcePath: "\(number).jpg", originalPath: "originals/00/\(number).jpg", importedAt: moment,
                    runID: "import-1")
    }

    static func probe(_ number: Int, taken: Date?) -> MediaProbeRecord {
        MediaProbeRecord(checksum: checksum(number), container: "jpeg", width: 4, height: 3, durationSeconds: nil,
                         captureDate: taken, cameraMake: nil, cameraModel: nil, latitude: nil, longitude: nil,
                         altitude: nil, codec: nil, probeJSON: #"{"n":\#(number)}"#, probedAt: moment)
    }

    static func file(_ path: String, _ number: Int) -> SourceFile {
        SourceFile(relativePath: path, fingerprint: FileFingerprint(device: 1, inode: UInt64(number), size: 1,
                                                                    modificationTimeNanoseconds: 1),
                   checksum: checksum(number), kind: .photo)
    }

    @Test(arguments: CatalogBackend.allCases)
    func sourcePathsAndTheContentAtAPathAreFoundAlike(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let photos = try await catalog.sourceID(forRoot: "/photos")
            let archive = try await catalog.sourceID(forRoot: "/archive")
            // Bytewise order: "B" before "a", "Z" before "b".
            try await catalog.updateSnapshot(sourceID: photos, upserting: [Self.file("b/x.jpg", 1), Self.file("Z.jpg", 1),
                                                                           Self.file("a.jpg", 2)], removing: [])
            try await catalog.updateSnapshot(sourceID: archive, upserting: [Self.file("old/x.jpg", 1)], removing: [])
            #expect(try await catalog.sourcePaths(of: Self.checksum(1)) == [
                SourcePath(root: "/archive", relativePath: "old/x.jpg"), SourcePath(root: "/photos", relativePath: "Z.jpg"),
                SourcePath(root: "/photos", relativePath: "b/x.jpg"),
            ])
            #expect(try await catalog.sourcePaths(of: Self.checksum(9)).isEmpty)
            #expect(try await catalog.checksums(atSourcePath: "a.jpg") == [Self.checksum(2)])
            #expect(try await catalog.checksums(atSourcePath: "/archive/old/x.jpg") == [Self.checksum(1)])
            #expect(try await catalog.checksums(atSourcePath: "/photos/old/x.jpg").isEmpty)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func assetsAreListedByCaptureTimeWithTheirFilters(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let day = 86_400.0
            try await catalog.insertAssets([Self.asset(1), Self.asset(2, kind: .video), Self.asset(3), Self.asset(4),
                                            Self.asset(5)])
            // 4 was taken first, then 2, then 1; 3 and 5 have no capture time (listed last, by checksum).
            try await catalog.saveImportItemStates([], with: StageRows(probes: [
                Self.probe(1, taken: Self.moment + 2 * day), Self.probe(2, taken: Self.moment + day),
                Self.probe(4, taken: Self.moment), Self.probe(5, taken: nil),
            ]))
            let all = try await catalog.listedAssets(since: nil, until: nil, kind: nil, albums: nil)
            #expect(all.map(\.asset.checksum) == [4, 2, 1, 3, 5].map(Self.checksum))
            #expect(all.map(\.captureDate) == [Self.moment, Self.moment + day, Self.moment + 2 * day, nil, nil])
            #expect(all.map(\.probeJSON) == [#"{"n":4}"#, #"{"n":2}"#, #"{"n":1}"#, nil, #"{"n":5}"#])
            #expect(all.first?.asset == Self.asset(4))

            let window = try await catalog.listedAssets(since: Self.moment + day, until: Self.moment + 2 * day, kind: nil, albums: nil)
            #expect(window.map(\.asset.checksum) == [Self.checksum(2)])
            let photos = try await catalog.listedAssets(since: Self.moment, until: nil, kind: .photo, albums: nil)
            #expect(photos.map(\.asset.checksum) == [4, 1].map(Self.checksum))

            let source = try await catalog.sourceID(forRoot: "/takeout")
            let album = AlbumRecord(sourceID: source, folder: "Trip", title: "Trip", description: nil, date: nil,
                                    metadataChecksum: Self.checksum(99), metadataPath: "albums/trip.json",
                                    metadataSourcePath: "Trip/metadata.json", updatedAt: Self.moment)
            let change = try await catalog.saveAlbum(album, members: [Self.checksum(1), Self.checksum(5)])
            let members = try await catalog.listedAssets(since: nil, until: nil, kind: nil, albums: [change.id])
            #expect(members.map(\.asset.checksum) == [1, 5].map(Self.checksum))
            #expect(try await catalog.listedAssets(since: nil, until: nil, kind: nil, albums: []).isEmpty)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func anItemIsFoundByItsContent(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            let planned = try await catalog.planImportItems([
                ImportItem(relativePath: "7.jpg", sourceRoot: "/photos", kind: .photo, byteCount: 7, checksum: Self.checksum(7)),
            ], sourceID: source)
            var record = try #require(planned.first)
            #expect(try await catalog.importItem(Self.checksum(7))?.id == record.id)
            #expect(try await catalog.importItem(Self.checksum(8)) == nil)
            record.state = .failed(ItemFailure(phase: .thumbnail, reason: FailureReason(operation: "decode", "not a JPEG"),
                                               attempts: 2, retryable: false))
            try await catalog.saveImportItemStates([record], with: StageRows())
            let read = try #require(try await catalog.importItem(Self.checksum(7)))
            #expect(read.state == record.state && read.item.relativePath == "7.jpg")
        }
    }
}
