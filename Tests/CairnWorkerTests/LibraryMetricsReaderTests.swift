import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMetrics
import CairnReconcileOracle
import CairnTesting
import Foundation
import XCTest

@testable import CairnStatus

final class LibraryMetricsReaderTests: XCTestCase {
    private func asset(_ index: Int, kind: MediaKind = .photo) -> AssetRecord {
        var bytes = [UInt8](repeating: 0, count: 20)
        withUnsafeBytes(of: UInt64(index).bigEndian) { for (offset, byte) in $0.enumerated() { bytes[12 + offset] = byte } }
        let checksum = Checksum(hex: bytes.map { String(format: "%02x", $0) }.joined())!
        return AssetRecord(checksum: checksum, kind: kind, size: 1000, originalExtension: "jpg", firstSourcePath: "p\(index).jpg",
                           originalPath: "originals/p\(index).jpg", importedAt: Date(timeIntervalSince1970: 1_800_000_000),
                           runID: nil)
    }

    private func seriesCount(assets: Int) async throws -> (series: Int, photos: Double?) {
        let folder = try TemporaryDirectory(prefix: "metrics-reader")
        let library = try Library(root: folder.subpath("library"))
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        defer { library.close() }
        try await catalog.insertAssets((0..<assets).map { asset($0, kind: $0 % 10 == 0 ? .video : .photo) })
        let metrics = try await LibraryMetricsReader.read(layout: library.layout, catalog: catalog,
                                                          sourceRoot: nil, quarantineDays: 14)
        let text = MetricsExposition.render([metrics], version: "1")
        let samples = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        let photos = samples.first { $0.hasPrefix("cairn_library_assets{") && $0.contains("kind=\"photo\"") }
            .flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
        return (samples.count, photos)
    }

    func testTheSameSeriesAtAThousandAndAtAHundredThousandAssets() async throws {
        let small = try await seriesCount(assets: 1_000)
        let large = try await seriesCount(assets: 100_000)
        XCTAssertEqual(small.photos, 900)
        XCTAssertEqual(large.photos, 90_000)
        XCTAssertEqual(small.series, large.series)
    }

    func testTheLastSuccessComesFromTheRunHistoryAndFailuresAreCountedInARow() async throws {
        let folder = try TemporaryDirectory(prefix: "metrics-runs")
        let library = try Library(root: folder.subpath("library"))
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        defer { library.close() }
        let outcomes: [RunOutcome] = [.success, .someFailed, .failed, .held, .interrupted]
        for (index, outcome) in outcomes.enumerated() {
            var run = RunRecord(id: "run-\(index)", command: "sync", sourceID: nil,
                                startedAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(index) * 100))
            try await catalog.startRun(run)
            run.endedAt = run.startedAt.addingTimeInterval(10)
            run.outcome = outcome
            try await catalog.finishRun(run, failures: [])
        }
        let metrics = try await LibraryMetricsReader.read(layout: library.layout, catalog: catalog,
                                                          sourceRoot: nil, quarantineDays: nil)
        XCTAssertEqual(metrics.lastSuccess, Date(timeIntervalSince1970: 1_800_000_110), "the partial run, not a later failure")
        XCTAssertEqual(metrics.failedRunsInARow, 3)
        XCTAssertEqual(metrics.lastRunOutcome, .interrupted)
        XCTAssertFalse(metrics.runInProgress)
    }
}
