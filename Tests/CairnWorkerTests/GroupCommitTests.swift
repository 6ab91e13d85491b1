import CairnCatalog
import CairnCore
import CairnHashing
import CairnPipeline
import CairnReconcileOracle
import CairnTesting
import Foundation
import Testing

@testable import CairnLibrary
@testable import CairnStages

/// The group commit: rows the stages return reach the catalog with their item's move, after one sync of the
/// library's file system, and only rows that point at files wait for a sync.
@Suite struct GroupCommitTests {
    @Test func rowsReachTheCatalogWithTheirMovesAfterOneSync() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-group-commit")
        let library = try Library(root: folder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        let commit = try GroupCommit(libraryRoot: library.layout.root)
        let store = CatalogItemStateStore(catalog: catalog, groupCommit: commit)
        let checksum = try #require(Checksum(hex: String(repeating: "ab", count: 20)))
        let asset = AssetRecord(checksum: checksum, kind: .photo, size: 3, originalExtension: "jpg",
                                firstSourcePath: "a.jpg", originalPath: "originals/ab/ab.jpg", importedAt: Date(), runID: nil)
        var second = asset
        second.checksum = try #require(Checksum(hex: String(repeating: "cd", count: 20)))
        second.originalPath = "originals/cd/cd.jpg"
        func move(_ id: Int64, _ sum: Checksum, _ rows: StageRows) -> ItemMove {
            ItemMove(ItemRecord(item: ImportItem(id: ItemID(id), relativePath: "\(id).jpg", sourceRoot: "", kind: .photo,
                                                 byteCount: 3, checksum: sum)), products: rows)
        }

        try await store.save([move(1, checksum, StageRows(assets: [asset])), move(2, second.checksum, StageRows(assets: [second]))])
        #expect(try await catalog.asset(checksum)?.originalPath == "originals/ab/ab.jpg")
        #expect(try await catalog.asset(second.checksum)?.originalPath == "originals/cd/cd.jpg")
        #expect(commit.syncCount == 1, "the batch of two was made durable by one sync")

        let probe = MediaProbeRecord(
            checksum: checksum, container: "jpeg", width: 4, height: 3, durationSeconds: nil, captureDate: nil,
            cameraMake: nil, cameraModel: nil, latitude: nil, longitude: nil, altitude: nil, codec: nil,
            probeJSON: "{}", probedAt: Date())
        try await store.save([move(1, checksum, StageRows(probes: [probe], keptWithoutPreview: [(checksum, "no decoder")]))])
        #expect(try await catalog.mediaProbe(checksum)?.width == 4)
        #expect(try await catalog.asset(checksum)?.noPreviewReason == "no decoder")
        #expect(commit.syncCount == 1, "a probe and a reason point at no file: their batch needs no sync")
    }

    /// Through the real lanes, archive only: every original's row is written and points at its bytes.
    @Test func anArchiveOnlyImportCataloguesEveryOriginalThroughTheBatches() async throws {
        let source = try TemporaryDirectory(prefix: "cairn-group-source")
        let folder = try TemporaryDirectory(prefix: "cairn-group-library")
        let library = try Library(root: folder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        var content: [ImportItem] = []
        for index in 0..<24 {
            let data = try DistinctJPEG.data(byteCount: 3000, seed: UInt8(index))
            try source.write(data, to: "p\(index).jpg")
            let hashed = try FileHasher().hash(path: source.subpath("p\(index).jpg"))
            content.append(ImportItem(relativePath: "p\(index).jpg", sourceRoot: source.path, kind: .photo,
                                      byteCount: hashed.fingerprint.size, checksum: hashed.checksum))
        }
        var configuration = PipelineConfiguration.defaults(cores: 2)
        configuration.derivativesEnabled = false
        let sourceID = try await catalog.sourceID(forRoot: source.path)
        let pipeline = PipelineImport(library: library, catalog: catalog, configuration: configuration, sourceID: sourceID)
        let result = try await pipeline.run(newItems: content, onEvent: { _ in }, cancellation: PipelineCancellation())
        #expect(result.report.count(.archived) == 24)
        for item in content {
            let asset = try #require(try await catalog.asset(item.checksum))
            let stored = try Data(contentsOf: URL(fileURLWithPath: library.layout.absolute(asset.originalPath)))
            #expect(stored == (try Data(contentsOf: URL(fileURLWithPath: source.subpath(item.relativePath)))))
        }
        #expect(try await catalog.importItems().allSatisfy { $0.state == .probing }, "each owes its probe")
    }
}
