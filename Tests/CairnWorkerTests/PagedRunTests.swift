import CairnCatalog
import CairnCore
import CairnLibrary
import CairnTesting
import Foundation
import Testing

@testable import CairnImport

/// A run keeps its files in the catalog's run tables and feeds the walk, the hashing and the lanes a page at a
/// time; with pages of two, a handful of files crosses every page boundary.
@Suite struct PagedRunTests {
    func bytes(_ count: Int, _ seed: UInt8) -> Data { (try? DistinctJPEG.data(byteCount: count, seed: seed)) ?? Data() }

    func run(_ source: String, _ library: Library, report: Bool, cancelled: Bool = false,
             archiveOnly: Bool = false) async throws -> ImportSummary {
        var options = ImportOptions(source: source)
        options.keepsOutcomes = report
        options.pipeline.derivativesEnabled = !archiveOnly
        if cancelled { options.cancellation.cancel(deadline: .zero) }
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        var run = ImportRun(library: library, catalog: catalog, options: options)
        run.pageSizes = ImportRun.PageSizes(walk: 2, hash: 2, import: 2)
        return try await run.run()
    }

    /// What a run counts in SQL (no `--report`) is what its report says line by line, run after run.
    @Test func countsWithoutAReportMatchTheReportAcrossPages() async throws {
        let source = try TemporaryDirectory()
        for seed in UInt8(1)...5 { try source.write(bytes(20_000, seed), to: "a/\(seed).jpg") }
        try source.write(bytes(20_000, 1), to: "b/copy of 1.jpg")
        try source.write(bytes(20_000, 4), to: "b/copy of 4.jpg")
        let counting = try Library(root: try TemporaryDirectory().path)
        let countingCatalog = try counting.openCatalog()
        defer { countingCatalog.close() }
        let reporting = try Library(root: try TemporaryDirectory().path)
        let reportingCatalog = try reporting.openCatalog()
        defer { reportingCatalog.close() }

        for round in 1...2 {
            if round == 2 { try source.write(bytes(20_000, 9), to: "c/new.jpg") }
            let counted = try await run(source.path, counting, report: false)
            let reported = try await run(source.path, reporting, report: true)
            #expect(counted.counts == reported.counts)
            #expect(counted.exitStatus == .success)
            var tally: [FileOutcome.Kind: Int] = [:]
            for entry in reported.outcomes { tally[entry.outcome.kind, default: 0] += 1 }
            #expect(reported.counts.duplicates == tally[.duplicate] ?? 0)
            #expect(reported.counts.unchanged == tally[.unchanged] ?? 0)
            #expect(reported.outcomes.map(\.path) == reported.outcomes.map(\.path).sorted())
            if round == 1 {
                #expect(counted.counts.imported == 5)
                #expect(counted.counts.duplicates == 2)
                #expect(tally[.imported] == 5)
            } else {
                #expect(counted.counts.imported == 1)
                #expect(counted.counts.unchanged == 7)
                #expect(counted.counts.hashed == 1)
            }
        }
        #expect(try await countingCatalog.assetCount() == 6)
        #expect(try await reportingCatalog.assetCount() == 6)
    }

    /// A run stopped before it starts stops in its walk: it reads and imports nothing, says so with exit 130, and is
    /// recorded as interrupted; the next run hashes and brings every file in.
    @Test func contentAStoppedRunNeverReachedIsUnfinishedAndTheNextRunImportsIt() async throws {
        let source = try TemporaryDirectory()
        for seed in UInt8(1)...5 { try source.write(bytes(20_000, seed), to: "\(seed).jpg") }
        let library = try Library(root: try TemporaryDirectory().path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        for report in [true, false] {
            do {
                _ = try await run(source.path, library, report: report, cancelled: true)
                Issue.record("a run stopped before its walk returned a summary")
            } catch let error as WorkerError {
                #expect(error.exitStatus == .interrupted)
                #expect(error.description.contains("interrupted during the walk"))
            }
            #expect(try await catalog.lastRun(command: nil)?.outcome == .interrupted)
            #expect(try await catalog.assetCount() == 0)
        }

        let next = try await run(source.path, library, report: false)
        #expect(next.counts.imported == 5)
        #expect(next.counts.hashed == 5)
        #expect(next.exitStatus == .success)
        #expect(try await catalog.assetCount() == 5)
    }

    /// Cancelling the task that runs an import stops it as SIGINT does: the hashing stops, the run is recorded as
    /// interrupted (a catalog write made after the cancel), and the next run imports every file.
    @Test func cancellingTheRunsTaskStopsItLikeSIGINTAndKeepsItsRecord() async throws {
        let source = try TemporaryDirectory()
        for seed in UInt8(1)...5 { try source.write(bytes(20_000, seed), to: "\(seed).jpg") }
        let library = try Library(root: try TemporaryDirectory().path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        let task = Locked<Task<ImportSummary, any Error>?>(nil)
        var run = ImportRun(library: library, catalog: catalog, options: ImportOptions(source: source.path))
        run.pageSizes = ImportRun.PageSizes(walk: 2, hash: 2, import: 2)
        // After the walk, before any file is read: the run's own task is cancelled.
        run.hooks.afterScan = { _ in task.withLock(when: { $0 != nil }) { $0 }?.cancel() }
        let started = Task { [run] in try await run.run() }
        task.withLockNotifying { $0 = started }
        do {
            let summary = try await started.value
            #expect(summary.exitStatus == .interrupted)
            #expect(summary.counts.imported == 0)
        } catch let error as WorkerError {
            #expect(error.exitStatus == .interrupted)
        }
        #expect(try await catalog.lastRun(command: nil)?.outcome == .interrupted)
        #expect(try await catalog.assetCount() == 0)

        let next = try await self.run(source.path, library, report: false)
        #expect(next.counts.imported == 5)
        #expect(next.exitStatus == .success)
    }

    /// Items an archive-only run left for their derivatives resume in the next run, each on the first file holding
    /// its content, counted the same with or without a report.
    @Test func archivedItemsResumeOnTheirFirstFileWithOrWithoutAReport() async throws {
        let source = try TemporaryDirectory()
        for seed in UInt8(1)...3 { try source.write(bytes(20_000, seed), to: "\(seed).jpg") }
        try source.write(bytes(20_000, 2), to: "z/copy of 2.jpg")
        let counting = try Library(root: try TemporaryDirectory().path)
        let countingCatalog = try counting.openCatalog()
        defer { countingCatalog.close() }
        let reporting = try Library(root: try TemporaryDirectory().path)
        let reportingCatalog = try reporting.openCatalog()
        defer { reportingCatalog.close() }
        for library in [counting, reporting] {
            let archived = try await run(source.path, library, report: false, archiveOnly: true)
            #expect(archived.counts.archived == 3)
        }
        let counted = try await run(source.path, counting, report: false)
        let reported = try await run(source.path, reporting, report: true)
        #expect(counted.counts == reported.counts)
        #expect(counted.counts.imported == 3)
        #expect(counted.counts.unchanged == 1)
        #expect(reported.outcomes.map(\.path) == ["1.jpg", "2.jpg", "3.jpg", "z/copy of 2.jpg"])
        #expect(reported.outcomes.map(\.outcome) == [.imported, .imported, .imported, .unchanged])
    }
}
