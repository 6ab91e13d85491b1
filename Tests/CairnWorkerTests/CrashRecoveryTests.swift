import CairnCatalog
import CairnCore
import CairnLibrary
import CairnPipeline
import CairnReconcileOracle
import CairnTesting
import Foundation
import Testing

@testable import CairnImport

/// The worker's start-up recovery over a real catalog and a real evidence file: what a dead worker left in flight is
/// weighed once, before any work, by what the evidence says of how it died.
@Suite struct CrashRecoveryTests {
    let source: TemporaryDirectory
    let libraryFolder: TemporaryDirectory

    init() throws {
        source = try TemporaryDirectory(prefix: "cairn-recovery-source")
        libraryFolder = try TemporaryDirectory(prefix: "cairn-recovery-library")
        for (index, name) in ["poison.jpg", "fine.jpg", "other.jpg"].enumerated() {
            try MediaFixtures.jpeg(at: source.subpath(name), width: 64 + 16 * index, height: 48)
        }
    }

    /// Plans the three files as the walk would and leaves them as a dead worker did: `poison.jpg` in flight (alone
    /// or not), the rest in flight among others.
    func leaveInFlight(poisonAlone: Bool, fault: String?) async throws {
        let library = try Library(root: libraryFolder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        defer { library.close() }
        let sourceID = try await catalog.sourceID(forRoot: source.path)
        let items = try ["poison.jpg", "fine.jpg", "other.jpg"].map { name in
            ImportItem(relativePath: name, sourceRoot: source.path, kind: .photo,
                       byteCount: Int64(try Data(contentsOf: URL(fileURLWithPath: source.subpath(name))).count),
                       checksum: try #require(Checksum(hex: String(decoding: try ExternalTool.run(
                           ["sha1sum", source.subpath(name)]), as: UTF8.self).prefix(40))))
        }
        let planned = try await catalog.planImportItems(items, sourceID: sourceID)
        try await catalog.saveImportItemStates(planned.map { record in
            var record = record
            record.state = .queued
            record.inFlight = true
            record.runsAlone = poisonAlone && record.item.relativePath == "poison.jpg"
            record.crashCount = record.runsAlone ? 1 : 0
            return record
        }, with: StageRows())
        try Data((fault ?? "").utf8).write(to: URL(fileURLWithPath: library.layout.crashEvidencePath))
    }

    func importOnce(retryFailed: Bool = false) async throws -> (ImportSummary, [String: ItemRecord]) {
        let library = try Library(root: libraryFolder.path)
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        defer { library.close() }
        var options = ImportOptions(source: source.path)
        options.pipeline.clipsEnabled = false
        options.retryFailed = retryFailed
        let summary = try await ImportRun(library: library, catalog: catalog, options: options).run()
        let rows = try await catalog.importItems()
        return (summary, Dictionary(uniqueKeysWithValues: rows.map { ($0.item.relativePath, $0) }))
    }

    @Test func aCrashWhileASuspectRanAloneFailsItVisiblyUntilRetried() async throws {
        try await leaveInFlight(poisonAlone: true, fault: "fault signal 11")

        let (summary, rows) = try await importOnce()
        #expect(summary.exitStatus == .someFilesFailed)
        #expect(summary.failures.map(\.relativePath) == ["poison.jpg"])
        #expect(summary.failures.first?.reason == CrashLoopGuard.reason)
        #expect(summary.counts.failed == 1)
        #expect(rows["poison.jpg"]?.state.failure?.reason == CrashLoopGuard.reason)
        #expect(rows["fine.jpg"]?.state == .ready && rows["other.jpg"]?.state == .ready)
        #expect(rows.values.allSatisfy { !$0.inFlight })
        // The evidence is used once: the file is emptied for the run that read it.
        #expect(try Data(contentsOf: URL(fileURLWithPath: LibraryLayout(root: libraryFolder.path).crashEvidencePath)).isEmpty)

        // The next run leaves it failed (no second crash) and says so again.
        let (again, rowsAgain) = try await importOnce()
        #expect(again.failures.map(\.relativePath) == ["poison.jpg"] && again.counts.failed == 1)
        #expect(rowsAgain["poison.jpg"]?.state.isTerminal == true)

        // Asked to, a run takes it through the lanes again (here it does not crash: it is imported).
        let (retried, rowsRetried) = try await importOnce(retryFailed: true)
        #expect(retried.exitStatus == .success && retried.failures.isEmpty)
        #expect(rowsRetried["poison.jpg"]?.state == .ready)
    }

    @Test func aCrashFailureIsNoLongerReportedOnceItsFileLeftTheSource() async throws {
        try await leaveInFlight(poisonAlone: true, fault: "fault signal 11")
        let (first, _) = try await importOnce()
        #expect(first.failures.map(\.relativePath) == ["poison.jpg"])
        try FileManager.default.removeItem(atPath: source.subpath("poison.jpg"))
        let (after, _) = try await importOnce()
        #expect(after.exitStatus == .success && after.failures.isEmpty)
    }

    @Test func aKillBlamesNobodyEvenAnItemThatRanAlone() async throws {
        try await leaveInFlight(poisonAlone: true, fault: nil)
        let (summary, rows) = try await importOnce()
        #expect(summary.exitStatus == .success && summary.failures.isEmpty)
        #expect(rows.values.allSatisfy { $0.state == .ready && $0.crashCount == 0 && $0.killCount == 0 })
    }

    @Test func aCrashAmongManyInFlightMakesSuspectsButFailsNobody() async throws {
        try await leaveInFlight(poisonAlone: false, fault: "fault signal 11")
        let (summary, rows) = try await importOnce()
        #expect(summary.exitStatus == .success && summary.failures.isEmpty)
        #expect(rows.values.allSatisfy { $0.state == .ready })
    }
}
