import CairnCatalog
import CairnCore
import Foundation
import Testing

/// What every catalog backend must do with the library's trash: each test runs on every `CatalogBackend` with the
/// same expectations.
@Suite struct TrashContractTests {
    static func asset(_ number: Int, runID: String? = "import-1") -> AssetRecord {
        AssetRecord(checksum: Checksum(hex: String(format: "%040x", number))!, kind: number.isMultiple(of: 2) ? .video : .photo,
                    size: Int64(number) * 1_000_000, originalExtension: number.isMultiple(of: 2) ? "mov" : "jpg",
                    firstSourcePath: "DCIM/\(number)", originalPath: "originals/00/\(number)",
                    importedAt: Date(timeIntervalSince1970: 1_795_000_000 + Double(number)), runID: runID)
    }

    @Test(arguments: CatalogBackend.allCases)
    func aTrashedAssetLeavesTheLibraryUntilItIsRestoredOrForgotten(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let assets = (1...4).map { Self.asset($0) }
            try await catalog.saveImportItemStates([], with: StageRows(assets: assets))
            let first = Date(timeIntervalSince1970: 1_795_100_000), second = first.addingTimeInterval(60)
            let paths = { (asset: AssetRecord) in [asset.originalPath, "thumbnails/00/\(asset.firstSourcePath.suffix(1)).webp"] }

            try await catalog.markTrashed([(assets[0].checksum, paths(assets[0])), (assets[1].checksum, paths(assets[1])),
                                           (Checksum(hex: String(repeating: "f", count: 40))!, ["nowhere"])],
                                          runID: "sync-1", at: first)
            try await catalog.markTrashed([(assets[2].checksum, paths(assets[2]))], runID: "sync-2", at: second)
            for trashed in assets.prefix(3) { #expect(try await catalog.asset(trashed.checksum) == nil) }
            #expect(try await catalog.asset(assets[3].checksum) == assets[3])

            let expected = assets.prefix(3).enumerated().map { index, asset in
                TrashedAssetRecord(asset: asset, trashRunID: index < 2 ? "sync-1" : "sync-2", trashedAt: index < 2 ? first : second,
                                   libraryPaths: paths(asset))
            }
            #expect(try await catalog.trashedAssets(runID: nil) == expected)
            #expect(try await catalog.trashedAssets(runID: "sync-2") == [expected[2]])

            // Restored by its own run only; an asset imported again meanwhile keeps the record it has now.
            var reimported = assets[1]
            reimported.originalPath = "originals/00/again"
            try await catalog.saveImportItemStates([], with: StageRows(assets: [reimported]))
            #expect(try await catalog.restoreTrashed([assets[2].checksum], runID: "sync-1").isEmpty)
            let restored = try await catalog.restoreTrashed([assets[1].checksum, assets[0].checksum], runID: "sync-1")
            #expect(restored == [assets[0].checksum, assets[1].checksum])
            #expect(try await catalog.asset(assets[0].checksum) == assets[0])
            #expect(try await catalog.asset(assets[1].checksum) == reimported)
            #expect(try await catalog.trashedAssets(runID: nil) == [expected[2]])

            try await catalog.forgetTrashed(runIDs: ["sync-2"])
            #expect(try await catalog.trashedAssets(runID: nil).isEmpty)
            #expect(try await catalog.asset(assets[2].checksum) == nil)
        }
    }
}
