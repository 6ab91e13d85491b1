import CairnCatalog
import CairnCore
import CairnHashing
import CairnPipeline
import CairnPostgresCatalog
import CairnQueue
import CairnTesting
import Foundation
import Testing

@testable import CairnLibrary
@testable import CairnStages

/// The real lanes with their items kept in a PostgreSQL catalog (`PipelineImport.itemCatalog`): the same stages,
/// scheduler and record writer as an import into SQLite, the states and the rows their phases made in PostgreSQL.
@Suite struct PipelineOnPostgresTests {
    /// One page, handed over once.
    final class OnePage: PlannedPageSource {
        let records: Locked<[ItemRecord]?>
        let refillBelow = 1

        init(_ records: [ItemRecord]) { self.records = Locked(records) }

        func nextPage(ended: [FileOutcomeEntry]) async throws -> [ItemRecord]? {
            records.withLock { records in defer { records = nil }; return records }
        }
    }

    @Test func stillsAndAVideoEndReadyWithTheirRowsInPostgreSQLAndNoneInTheLibrarysSQLite() async throws {
        let source = try TemporaryDirectory(prefix: "cairn-pg-pipeline-source")
        let libraryFolder = try TemporaryDirectory(prefix: "cairn-pg-pipeline-library")
        let library = try Library(root: libraryFolder.path)
        try MediaFixtures.jpegWithExif(at: source.subpath("IMG_0001.jpg"))
        try MediaFixtures.jpeg(at: source.subpath("IMG_0002.jpg"), width: 300, height: 200)
        try MediaFixtures.video(at: source.subpath("MOV_0003.mp4"), width: 160, height: 90, seconds: 1)
        let hasher = try FileHasher()
        let content = try ["IMG_0001.jpg", "IMG_0002.jpg", "MOV_0003.mp4"].map { path in
            let hashed = try hasher.hash(path: source.subpath(path))
            return ImportItem(relativePath: path, sourceRoot: source.path, kind: path.hasSuffix(".mp4") ? .video : .photo,
                              byteCount: hashed.fingerprint.size, checksum: hashed.checksum)
        }
        let location = PostgresLocation(endpoint: .socket(folder: try TestPostgres.socketFolder(), port: 5432),
                                        database: try TestPostgres.freshDatabase())

        try await PostgresCatalog.withCatalog(at: location, library: libraryFolder.path) { catalog in
            let sourceID = try await catalog.sourceID(forRoot: source.path)
            let planned = try await catalog.planImportItems(content, sourceID: sourceID)
            var configuration = PipelineConfiguration.defaults(cores: 2)
            configuration.backoff = BackoffPolicy(base: .milliseconds(1), maximum: .milliseconds(5))
            var run = PipelineImport(library: library, configuration: configuration, sourceID: sourceID)
            run.itemCatalog = catalog
            let result = try await run.run(pages: OnePage(planned), onEvent: { _ in }, cancellation: PipelineCancellation())

            #expect(result.completion == .finished && result.exitStatus == .success)
            let items = try await catalog.importItems()
            #expect(items.map(\.id) == planned.map(\.id))
            #expect(items.allSatisfy { $0.state == .ready && !$0.inFlight && $0.item.originalPath != nil })
            #expect(try await catalog.assetCount() == 3)
            #expect(try await catalog.mediaProbeCount() == 3)
            for item in content {
                let asset = try #require(try await catalog.asset(item.checksum))
                #expect(FileManager.default.fileExists(atPath: library.layout.absolute(asset.originalPath)))
                let derived = try await catalog.derivedFiles(of: item.checksum)
                let expected: Set<DerivedFileRecord.Role> = item.kind == .video ? [.thumbnail, .preview] : [.thumbnail, .preview, .clip]
                #expect(Set(derived.map(\.role)) == expected, "\(item.relativePath)")
                for file in derived {
                    #expect(FileSystem.size(library.layout.absolute(file.path)) == file.byteCount, "\(file.path)")
                }
            }
        }
        #expect(try library.catalog.importItems().isEmpty)
        #expect(try library.catalog.assetCount() == 0)
    }
}
