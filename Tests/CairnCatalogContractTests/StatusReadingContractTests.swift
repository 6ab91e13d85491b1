import CairnCatalog
import CairnCore
import CairnMetrics
import CairnStatus
import Foundation
import Testing

/// What the status page, `/metrics` and a run's metrics read, alike on every backend: the library's tallies, its
/// newest assets and which have thumbnails, the last run that went well, and the facts the page and the metrics are
/// made of.
@Suite struct StatusReadingContractTests {
    static let moment = Date(timeIntervalSince1970: 1_795_000_000)

    static func asset(_ number: Int, kind: MediaKind = .photo, size: Int64, importedAt: Date, runID: String) -> AssetRecord {
        AssetRecord(checksum: BrowseContractTests.checksum(number), kind: kind, size: size, originalExtension: "jpg",
                    firstSourcePath: "\(number).jpg", originalPath: "originals/00/\(number).jpg", importedAt: importedAt,
                    runID: runID)
    }

    /// Three runs (a success, a partial success, a failure with two failed files) and the five assets the first two
    /// brought in, one of them with a thumbnail.
    static func fill(_ catalog: any StatusCatalog & ItemCatalog) async throws {
        let outcomes: [RunOutcome] = [.success, .someFailed, .failed]
        for (index, outcome) in outcomes.enumerated() {
            var run = RunRecord(id: "run-\(index)", command: "sync", sourceID: nil, startedAt: moment + Double(index) * 100)
            try await catalog.startRun(run)
            run.endedAt = run.startedAt + 10
            run.outcome = outcome
            let failures = outcome == .failed ? [
                RunFailureRecord(runID: run.id, relativePath: "b.jpg", phase: .thumbnail, reason: "decode: not a JPEG"),
                RunFailureRecord(runID: run.id, relativePath: "a.mov", phase: .hashing, reason: "read: I/O error"),
            ] : []
            try await catalog.finishRun(run, failures: failures)
        }
        let assets = [
            asset(1, size: 100, importedAt: moment, runID: "run-0"),
            asset(2, kind: .video, size: 5_000, importedAt: moment, runID: "run-0"),
            asset(3, size: 300, importedAt: moment + 100, runID: "run-1"),
            asset(4, size: 400, importedAt: moment + 100, runID: "run-1"),
            asset(5, kind: .video, size: 7_000, importedAt: moment + 50, runID: "run-1"),
        ]
        let thumbnail = DerivedFileRecord(checksum: BrowseContractTests.checksum(4), role: .thumbnail,
                                          path: "derived/00/4-thumb.webp", format: "webp", width: 4, height: 3,
                                          byteCount: 10, createdAt: moment)
        // 5 has a preview but no thumbnail.
        let preview = DerivedFileRecord(checksum: BrowseContractTests.checksum(5), role: .preview,
                                        path: "derived/00/5-preview.webp", format: "webp", width: 8, height: 6,
                                        byteCount: 20, createdAt: moment)
        try await catalog.saveImportItemStates([], with: StageRows(assets: assets, derivedFiles: [thumbnail, preview]))
    }

    @Test(arguments: CatalogBackend.allCases)
    func talliesTheNewestAssetsAndTheLastGoodRunAreReadAlike(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            #expect(try await catalog.assetTally(broughtInBy: nil).isEmpty)
            #expect(try await catalog.newestAssets(limit: 3).isEmpty)
            #expect(try await catalog.lastRun(endedIn: [.success]) == nil)
            try await Self.fill(catalog)

            let all = try await catalog.assetTally(broughtInBy: nil)
            #expect(all[.photo]?.items == 3 && all[.photo]?.bytes == 800)
            #expect(all[.video]?.items == 2 && all[.video]?.bytes == 12_000)
            let second = try await catalog.assetTally(broughtInBy: "run-1")
            #expect(second[.photo]?.items == 2 && second[.video]?.bytes == 7_000)
            #expect(try await catalog.assetTally(broughtInBy: "run-9").isEmpty)

            // Newest first; imported together, by checksum.
            #expect(try await catalog.newestAssets(limit: 4).map(\.checksum) == [3, 4, 5, 1].map(BrowseContractTests.checksum))
            #expect(try await catalog.lastRun(endedIn: [.success, .someFailed])?.id == "run-1")
            #expect(try await catalog.lastRun(endedIn: [.success])?.id == "run-0")
            #expect(try await catalog.lastRun(endedIn: [.held, .interrupted]) == nil)
            #expect(try await catalog.lastRun(endedIn: []) == nil)
            #expect(try await catalog.thumbnailed([4, 5, 9].map(BrowseContractTests.checksum)) == [BrowseContractTests.checksum(4)])
            #expect(try await catalog.thumbnailed([]).isEmpty)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func theMetricsAndTheStatusPageReadTheirFactsFromEitherBackend(_ backend: CatalogBackend) async throws {
        try await backend.withLibrary { library, catalog in
            try await Self.fill(catalog)
            _ = try await catalog.sourceID(forRoot: "/photos")

            let metrics = try await LibraryMetricsReader.read(layout: library.layout, catalog: catalog, sourceRoot: "/photos",
                                                              quarantineDays: 14)
            #expect(metrics.library == "library" && metrics.source == "photos")
            #expect(metrics.libraryContent[.photo] == ContentTally(items: 3, bytes: 800))
            #expect(metrics.libraryContent[.video] == ContentTally(items: 2, bytes: 12_000))
            #expect(metrics.lastSuccess == Self.moment + 110, "the partial run's end, not the later failure's")
            #expect(metrics.failedRunsInARow == 1 && metrics.lastRunOutcome == .failure)
            #expect(metrics.failures.values.reduce(0, +) == 2)
            #expect(metrics.reconcile?.quarantineSeconds == 14 * 86_400 && metrics.reconcile?.pendingReview == 0)

            let page = try await StatusPageFacts.read(layout: library.layout, catalog: catalog, items: 3)
            #expect(page.newest.map(\.sha1) == [3, 4, 5].map { BrowseContractTests.checksum($0).hex })
            #expect(page.newest.map(\.hasThumbnail) == [false, true, false])
            #expect(page.waitingTotal == 0)
            let thumbnail = try await StatusPageFacts.thumbnail(catalog: catalog, sha1: BrowseContractTests.checksum(4).hex)
            #expect(thumbnail?.path == "derived/00/4-thumb.webp" && thumbnail?.format == "webp")
            #expect(try await StatusPageFacts.thumbnail(catalog: catalog, sha1: "not hex") == nil)
        }
    }
}
