import CairnCatalog
import CairnCore
import CairnHashing
import CairnNarration
import CairnPipeline
import CairnPostgresCatalog
import CairnQueue
import CairnReconcile
import CairnTesting
import Foundation
import Testing

@testable import CairnImport
@testable import CairnLibrary
import CairnReconcileOracle
@testable import CairnStages
@testable import CairnSync

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
        let sqlite = try library.openCatalog()
        defer { sqlite.close() }
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
            configuration.backoff = RetryPolicy(base: .milliseconds(1), cap: .milliseconds(5), jitter: 1...1.2)
            let run = PipelineImport(library: library, catalog: catalog, configuration: configuration, sourceID: sourceID)
            let result = try await run.run(pages: OnePage(planned), onEvent: { _ in }, cancellation: PipelineCancellation())

            #expect(result.completion == .success && result.exitStatus == .success)
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
        #expect(try await sqlite.importItems().isEmpty)
        #expect(try await sqlite.assetCount() == 0)
    }
}

/// A whole import and sync with every record in PostgreSQL: the walk and its checksums in the run's tables on the
/// server, the lanes' items and rows, the snapshot, the run records, the reconciliation stores. The library's SQLite
/// catalog holds nothing afterwards.
@Suite struct RunsOnPostgresTests {
    @Test func anImportARescanAndASyncKeepEveryRecordInPostgreSQL() async throws {
        let source = try TemporaryDirectory(prefix: "cairn-pg-run-source")
        let libraryFolder = try TemporaryDirectory(prefix: "cairn-pg-run-library")
        let library = try Library(root: libraryFolder.path)
        let sqlite = try library.openCatalog()
        defer { sqlite.close() }
        try MediaFixtures.jpegWithExif(at: source.subpath("IMG_0001.jpg"))
        try MediaFixtures.jpeg(at: source.subpath("IMG_0002.jpg"), width: 300, height: 200)
        try MediaFixtures.video(at: source.subpath("MOV_0003.mp4"), width: 160, height: 90, seconds: 1)
        try FileManager.default.createDirectory(atPath: source.subpath("copies"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source.subpath("IMG_0001.jpg"), toPath: source.subpath("copies/again.jpg"))
        let location = PostgresLocation(endpoint: .socket(folder: try TestPostgres.socketFolder(), port: 5432),
                                        database: try TestPostgres.freshDatabase())
        var options = ImportOptions(source: source.path)
        options.pipeline.backoff = RetryPolicy(base: .milliseconds(1), cap: .milliseconds(5), jitter: 1...1.2)
        options.keepsOutcomes = true

        try await PostgresCatalog.withCatalog(at: location, library: libraryFolder.path) { catalog in
            func importing() async throws -> ImportSummary {
                try await ImportRun(library: library, catalog: catalog, options: options,
                                    narration: RunNarration(layout: library.layout, output: DiscardingNarrationHandler())).run()
            }
            let first = try await importing()
            #expect(first.exitStatus == .success, "\(first.failures)")
            #expect(first.counts.filesSeen == 4 && first.counts.hashed == 4)
            #expect(first.counts.imported == 3 && first.counts.duplicates == 1)
            #expect(first.outcomes.filter { $0.outcome.kind == .imported }.count == 3)
            #expect(try await catalog.assetCount() == 3)
            #expect(try await catalog.importItems().allSatisfy { $0.state == .ready && !$0.inFlight })
            let sourceID = try await catalog.sourceID(forRoot: source.path)
            #expect(try await catalog.snapshot(sourceID: sourceID).count == 4)
            #expect(try await catalog.lastRun(command: "import")?.outcome == .success)

            // A rescan reads no file again and does no work.
            let again = try await importing()
            #expect(again.exitStatus == .success)
            #expect(again.counts.hashed == 0 && again.counts.imported == 0 && again.counts.unchanged == 4)

            // A sync: the first one finds nothing to delete; after IMG_0002.jpg goes, the next confirms its
            // deletion, which waits in quarantine.
            var syncOptions = SyncOptions(importOptions: options, settings: try ReconcileSettings(quarantineDays: 14))
            syncOptions.importOptions.keepsOutcomes = false
            func syncing() async throws -> SyncSummary {
                try await SyncRun(library: library, catalog: catalog, options: syncOptions).run()
            }
            let firstSync = try await syncing()
            #expect(firstSync.plan.deleteCandidates.isEmpty && firstSync.plan.heldByQuarantine.isEmpty)
            let gone = try #require(try await catalog.snapshot(sourceID: sourceID)["IMG_0002.jpg"]?.checksum)
            try FileManager.default.removeItem(atPath: source.subpath("IMG_0002.jpg"))
            let secondSync = try await syncing()
            #expect(secondSync.plan.heldByQuarantine.map(\.checksum) == [gone])
            #expect(try await catalog.reconcileState(sourceID: sourceID).confirmed.stamps.keys.sorted() == [gone])
            #expect(try await catalog.pending(sourceID: sourceID).map(\.checksum) == [gone])
            #expect(try await catalog.snapshot(sourceID: sourceID)["IMG_0002.jpg"] == nil)
            #expect(try await catalog.runs(limit: 10).map(\.command) == ["sync", "sync", "import", "import"])
        }
        #expect(try await sqlite.importItems().isEmpty)
        #expect(try await sqlite.assetCount() == 0)
        #expect(try await sqlite.lastRun(command: nil) == nil)
    }
}
