import CairnCore
import CairnReconcile
import CairnTesting
import Foundation
import Testing

@testable import CairnCatalog
import CairnReconcileOracle
@testable import CairnSync

@Suite struct ReconcileStoreTests {
    func sha(_ seed: UInt8) -> Checksum { Checksum(bytes: [UInt8](repeating: seed, count: 20))! }
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    func open() async throws -> (catalog: SQLiteCatalog, source: Int64) {
        let catalog = try SQLiteCatalog(path: directory.subpath("catalog.sqlite"))
        return (catalog, try await catalog.sourceID(forRoot: "/src"))
    }

    @Test func migrationIsRegisteredAfterV1() async throws {
        let catalog = try await open().catalog
        let applied = try await catalog.appliedMigrations()
        #expect(applied.contains(ReconcileMigration.name))
        #expect(applied.firstIndex(of: ReconcileMigration.name)! > applied.firstIndex(of: "v1: sources, snapshots, assets, runs")!)
    }

    @Test func applyMatchesThePureSemanticsIncludingFirstWriteWins() async throws {
        let (catalog, source) = try await open()
        var expected = ReconcileState()
        let first = StoreDelta(observedAdded: [sha(1), sha(2), sha(3)], confirmedStamped: [sha(1)], stampedAt: t0,
                               anchorsAdded: ["a.jpg": sha(2), "b.jpg": sha(3)], advanceSnapshot: true)
        try await catalog.applyReconcileDelta(first, sourceID: source, runID: "run-1")
        expected = expected.applying(first)
        #expect(try await catalog.reconcileState(sourceID: source) == expected)

        // Re-confirming keeps the first stamp; a new anchor for a known path is ignored; reappearance unstamps.
        let later = t0.addingTimeInterval(86_400)
        let second = StoreDelta(observedAdded: [sha(2), sha(4)], reappeared: [sha(1)], confirmedStamped: [sha(3)],
                                stampedAt: later, anchorsAdded: ["a.jpg": sha(4)], anchorsReleased: ["b.jpg"],
                                advanceSnapshot: true)
        try await catalog.applyReconcileDelta(second, sourceID: source, runID: "run-2")
        expected = expected.applying(second)
        let third = StoreDelta(confirmedStamped: [sha(3)], stampedAt: later.addingTimeInterval(86_400), advanceSnapshot: true)
        try await catalog.applyReconcileDelta(third, sourceID: source, runID: "run-3")
        expected = expected.applying(third)

        let loaded = try await catalog.reconcileState(sourceID: source)
        #expect(loaded == expected)
        #expect(loaded.confirmed[sha(3)] == later)
        #expect(!loaded.confirmed.contains(sha(1)))
        #expect(loaded.anchors["a.jpg"] == sha(2))
        #expect(loaded.anchors["b.jpg"] == nil)
        #expect(loaded.observed == [sha(1), sha(2), sha(3), sha(4)])
    }

    @Test func healthySnapshotReplacementKeepsOnlyTheNewPaths() async throws {
        let (catalog, source) = try await open()
        try await catalog.replaceHealthySnapshot(sourceID: source, with: ["a": sha(1), "b": sha(2), "c": sha(3)])
        try await catalog.replaceHealthySnapshot(sourceID: source, with: ["a": sha(1), "b": sha(9), "d": sha(4)])
        #expect(try await catalog.healthySnapshot(sourceID: source) == ["a": sha(1), "b": sha(9), "d": sha(4)])
        try await catalog.replaceHealthySnapshot(sourceID: source, with: [:])
        #expect(try await catalog.healthySnapshot(sourceID: source).isEmpty)
    }

    @Test func storesArePartitionedPerSource() async throws {
        let (catalog, source) = try await open()
        let other = try await catalog.sourceID(forRoot: "/other")
        try await catalog.applyReconcileDelta(StoreDelta(observedAdded: [sha(1)], stampedAt: t0, advanceSnapshot: true), sourceID: source, runID: nil)
        #expect(try await catalog.reconcileState(sourceID: other) == ReconcileState())
        #expect(try await catalog.reconcileState(sourceID: source).observed == [sha(1)])
    }

    @Test func commitAdvancesSnapshotAndFactsOnlyWhenHealthy() async throws {
        let (catalog, source) = try await open()
        #expect(try await catalog.reconcileFacts(sourceID: source).isFirstRun)
        let scan = SourceScanFacts(sourceRoot: "/src", hasMarker: true)
        let current = ["a.jpg": sha(1), "b.jpg": sha(2)]
        let first = Reconciler.reconcile(.init(
            state: ReconcileState(), previous: [:], current: current, library: [], scan: scan, now: t0,
            runID: "run-1", isFirstRun: true))
        try await catalog.commit(first, sourceID: source, current: current, scan: scan)
        #expect(try await catalog.healthySnapshot(sourceID: source) == current)
        var facts = try await catalog.reconcileFacts(sourceID: source)
        #expect(!facts.isFirstRun && facts.hadMarker && facts.lastHealthyFileCount == 2)
        #expect(facts.lastSyncRunID == "run-1" && facts.lastHealthyRunID == "run-1")

        // The source is gone: nothing advances, but the run is remembered.
        let missing = SourceScanFacts(sourceRoot: "/src", root: .missing, hadMarker: true)
        let state = try await catalog.reconcileState(sourceID: source)
        let second = Reconciler.reconcile(.init(
            state: state, previous: current, current: [:], library: [sha(1), sha(2)],
            scan: missing, now: t0.addingTimeInterval(60), runID: "run-2", isFirstRun: false))
        #expect(!second.delta.advanceSnapshot)
        try await catalog.commit(second, sourceID: source, current: [:], scan: missing)
        #expect(try await catalog.healthySnapshot(sourceID: source) == current)
        facts = try await catalog.reconcileFacts(sourceID: source)
        #expect(facts.lastSyncRunID == "run-2" && facts.lastHealthyRunID == "run-1" && facts.hadMarker)
        #expect(try await catalog.pending(sourceID: source).map(\.status) == [.held, .held])
    }

    @Test func pendingListsThePlanAndFollowsApproveAndExclude() async throws {
        let (catalog, source) = try await open()
        try await catalog.applyReconcileDelta(StoreDelta(observedAdded: [sha(1), sha(2), sha(3)], stampedAt: t0, advanceSnapshot: true),
                        sourceID: source, runID: nil)
        let plan = ReconciliationPlan(
            runID: "run-9", now: t0,
            pendingReview: [ReviewItem(checksum: sha(3))],
            heldByQuarantine: [QuarantineHold(checksum: sha(1), confirmedAt: t0, eligibleAt: t0.addingTimeInterval(14 * 86_400))])
        try await catalog.replacePending(sourceID: source, runID: plan.runID, entries: PendingEntry.entries(of: plan))
        let items = try await catalog.pending(sourceID: nil)
        #expect(items.map(\.status) == [.quarantine, .review])
        #expect(items.first?.eligibleAt == t0.addingTimeInterval(14 * 86_400))

        try await catalog.approve([sha(3)], sourceIDs: [source], at: t0)
        #expect(try await catalog.pending(sourceID: nil).map(\.status) == [.approved, .quarantine])
        #expect(try await catalog.reconcileState(sourceID: source).approved == [sha(3)])

        try await catalog.exclude([sha(1), sha(3)], sourceIDs: [source], at: t0)
        #expect(try await catalog.pending(sourceID: nil).isEmpty)
        let state = try await catalog.reconcileState(sourceID: source)
        #expect(state.exclusions == [sha(1), sha(3)] && state.approved.isEmpty)

        await #expect(throws: ReconcileStoreError.self) { try await catalog.approve([sha(9)], sourceIDs: [source], at: t0) }
    }

    @Test func excludeAllConfirmedSinceARun() async throws {
        let (catalog, source) = try await open()
        try await catalog.applyReconcileDelta(StoreDelta(confirmedStamped: [sha(1)], stampedAt: t0, advanceSnapshot: true), sourceID: source, runID: "r1")
        try await catalog.applyReconcileDelta(StoreDelta(confirmedStamped: [sha(2), sha(3)], stampedAt: t0.addingTimeInterval(10), advanceSnapshot: true),
                        sourceID: source, runID: "r2")
        try await catalog.applyReconcileDelta(StoreDelta(confirmedStamped: [sha(4)], stampedAt: t0.addingTimeInterval(20), advanceSnapshot: true),
                        sourceID: source, runID: "r3")
        let excluded = try await catalog.excludeConfirmed(sinceRunID: "r2", sourceIDs: [source], at: t0)
        #expect(excluded == [sha(2), sha(3), sha(4)].sorted())
        #expect(try await catalog.exclusions(sourceID: source) == excluded)
        await #expect(throws: ReconcileStoreError.self) { try await catalog.excludeConfirmed(sinceRunID: "nope", sourceIDs: [source], at: t0) }
    }

    @Test func trashedAssetsLeaveTheListingAndComeBackOnRestore() async throws {
        let catalog = try await open().catalog
        let asset = AssetRecord(checksum: sha(1), kind: .photo, size: 10, originalExtension: "jpg", firstSourcePath: "a.jpg",
                                originalPath: "originals/01/01/x.jpg", importedAt: t0, runID: "imp")
        try await catalog.insertAssets([asset, AssetRecord(checksum: sha(2), kind: .video, size: 5, originalExtension: "mov",
                                                     firstSourcePath: "b.mov", originalPath: "o/b", importedAt: t0, runID: nil)])
        try await catalog.markTrashed([(sha(1), ["originals/01/01/x.jpg", "derived/01/x-thumb.jpg"])], runID: "t1", at: t0)
        #expect(try await catalog.assetChecksums() == [sha(2)])
        let trashed = try await catalog.trashedAssets(runID: "t1")
        #expect(trashed.count == 1 && trashed[0].asset == asset && trashed[0].libraryPaths.count == 2)

        #expect(try await catalog.restoreTrashed([sha(1)], runID: "t1") == [sha(1)])
        #expect(try await catalog.asset(sha(1)) == asset)
        #expect(try await catalog.trashedAssets(runID: nil).isEmpty)

        try await catalog.markTrashed([(sha(2), ["o/b"])], runID: "t2", at: t0)
        try await catalog.forgetTrashed(runIDs: ["t2"])
        #expect(try await catalog.trashedAssets(runID: nil).isEmpty)
        #expect(try await catalog.asset(sha(2)) == nil)
    }
}
