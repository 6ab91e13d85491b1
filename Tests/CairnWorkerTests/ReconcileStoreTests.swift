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

    func open() throws -> (TemporaryDirectory, Catalog, ReconcileStore, Int64) {
        let catalog = try Catalog(path: directory.subpath("catalog.sqlite"))
        let source = try catalog.sourceID(forRoot: "/src")
        return (directory, catalog, ReconcileStore(catalog: catalog), source)
    }

    @Test func migrationIsRegisteredAfterV1() throws {
        let (_, catalog, _, _) = try open()
        let applied = try catalog.appliedMigrations()
        #expect(applied.contains(ReconcileMigration.name))
        #expect(applied.firstIndex(of: ReconcileMigration.name)! > applied.firstIndex(of: "v1: sources, snapshots, assets, runs")!)
    }

    @Test func applyMatchesThePureSemanticsIncludingFirstWriteWins() throws {
        let (_, _, store, source) = try open()
        var expected = ReconcileState()
        let first = StoreDelta(observedAdded: [sha(1), sha(2), sha(3)], confirmedStamped: [sha(1)], stampedAt: t0,
                               anchorsAdded: ["a.jpg": sha(2), "b.jpg": sha(3)], advanceSnapshot: true)
        try store.apply(first, sourceID: source, runID: "run-1")
        expected = expected.applying(first)
        #expect(try store.loadState(sourceID: source) == expected)

        // Re-confirming keeps the first stamp; a new anchor for a known path is ignored; reappearance unstamps.
        let later = t0.addingTimeInterval(86_400)
        let second = StoreDelta(observedAdded: [sha(2), sha(4)], reappeared: [sha(1)], confirmedStamped: [sha(3)],
                                stampedAt: later, anchorsAdded: ["a.jpg": sha(4)], anchorsReleased: ["b.jpg"],
                                advanceSnapshot: true)
        try store.apply(second, sourceID: source, runID: "run-2")
        expected = expected.applying(second)
        let third = StoreDelta(confirmedStamped: [sha(3)], stampedAt: later.addingTimeInterval(86_400), advanceSnapshot: true)
        try store.apply(third, sourceID: source, runID: "run-3")
        expected = expected.applying(third)

        let loaded = try store.loadState(sourceID: source)
        #expect(loaded == expected)
        #expect(loaded.confirmed[sha(3)] == later)
        #expect(!loaded.confirmed.contains(sha(1)))
        #expect(loaded.anchors["a.jpg"] == sha(2))
        #expect(loaded.anchors["b.jpg"] == nil)
        #expect(loaded.observed == [sha(1), sha(2), sha(3), sha(4)])
    }

    @Test func healthySnapshotReplacementKeepsOnlyTheNewPaths() throws {
        let (_, _, store, source) = try open()
        try store.replaceHealthySnapshot(sourceID: source, with: ["a": sha(1), "b": sha(2), "c": sha(3)])
        try store.replaceHealthySnapshot(sourceID: source, with: ["a": sha(1), "b": sha(9), "d": sha(4)])
        #expect(try store.healthySnapshot(sourceID: source) == ["a": sha(1), "b": sha(9), "d": sha(4)])
        try store.replaceHealthySnapshot(sourceID: source, with: [:])
        #expect(try store.healthySnapshot(sourceID: source).isEmpty)
    }

    @Test func storesArePartitionedPerSource() throws {
        let (_, catalog, store, source) = try open()
        let other = try catalog.sourceID(forRoot: "/other")
        try store.apply(StoreDelta(observedAdded: [sha(1)], stampedAt: t0, advanceSnapshot: true), sourceID: source)
        #expect(try store.loadState(sourceID: other) == ReconcileState())
        #expect(try store.loadState(sourceID: source).observed == [sha(1)])
    }

    @Test func commitAdvancesSnapshotAndFactsOnlyWhenHealthy() throws {
        let (_, _, store, source) = try open()
        #expect(try store.facts(sourceID: source).isFirstRun)
        let scan = SourceScanFacts(sourceRoot: "/src", hasMarker: true)
        let current = ["a.jpg": sha(1), "b.jpg": sha(2)]
        let first = Reconciler.reconcile(.init(
            state: ReconcileState(), previous: [:], current: current, library: [], scan: scan, now: t0,
            runID: "run-1", isFirstRun: true))
        try store.commit(first, sourceID: source, current: current, scan: scan)
        #expect(try store.healthySnapshot(sourceID: source) == current)
        var facts = try store.facts(sourceID: source)
        #expect(!facts.isFirstRun && facts.hadMarker && facts.lastHealthyFileCount == 2)
        #expect(facts.lastSyncRunID == "run-1" && facts.lastHealthyRunID == "run-1")

        // The source is gone: nothing advances, but the run is remembered.
        let missing = SourceScanFacts(sourceRoot: "/src", root: .missing, hadMarker: true)
        let second = Reconciler.reconcile(.init(
            state: try store.loadState(sourceID: source), previous: current, current: [:], library: [sha(1), sha(2)],
            scan: missing, now: t0.addingTimeInterval(60), runID: "run-2", isFirstRun: false))
        #expect(!second.delta.advanceSnapshot)
        try store.commit(second, sourceID: source, current: [:], scan: missing)
        #expect(try store.healthySnapshot(sourceID: source) == current)
        facts = try store.facts(sourceID: source)
        #expect(facts.lastSyncRunID == "run-2" && facts.lastHealthyRunID == "run-1" && facts.hadMarker)
        #expect(try store.pending(sourceID: source).map(\.status) == [.held, .held])
    }

    @Test func pendingListsThePlanAndFollowsApproveAndExclude() throws {
        let (_, _, store, source) = try open()
        try store.apply(StoreDelta(observedAdded: [sha(1), sha(2), sha(3)], stampedAt: t0, advanceSnapshot: true),
                        sourceID: source)
        let plan = ReconciliationPlan(
            runID: "run-9", now: t0,
            pendingReview: [ReviewItem(checksum: sha(3))],
            heldByQuarantine: [QuarantineHold(checksum: sha(1), confirmedAt: t0, eligibleAt: t0.addingTimeInterval(14 * 86_400))])
        try store.replacePending(sourceID: source, runID: plan.runID, entries: PendingEntry.entries(of: plan))
        let items = try store.pending()
        #expect(items.map(\.status) == [.quarantine, .review])
        #expect(items.first?.eligibleAt == t0.addingTimeInterval(14 * 86_400))

        try store.approve([sha(3)], sourceIDs: [source], at: t0)
        #expect(try store.pending().map(\.status) == [.approved, .quarantine])
        #expect(try store.loadState(sourceID: source).approved == [sha(3)])

        try store.exclude([sha(1), sha(3)], sourceIDs: [source], at: t0)
        #expect(try store.pending().isEmpty)
        let state = try store.loadState(sourceID: source)
        #expect(state.exclusions == [sha(1), sha(3)] && state.approved.isEmpty)

        #expect(throws: ReconcileStoreError.self) { try store.approve([sha(9)], sourceIDs: [source], at: t0) }
    }

    @Test func excludeAllConfirmedSinceARun() throws {
        let (_, _, store, source) = try open()
        try store.apply(StoreDelta(confirmedStamped: [sha(1)], stampedAt: t0, advanceSnapshot: true), sourceID: source, runID: "r1")
        try store.apply(StoreDelta(confirmedStamped: [sha(2), sha(3)], stampedAt: t0.addingTimeInterval(10), advanceSnapshot: true),
                        sourceID: source, runID: "r2")
        try store.apply(StoreDelta(confirmedStamped: [sha(4)], stampedAt: t0.addingTimeInterval(20), advanceSnapshot: true),
                        sourceID: source, runID: "r3")
        let excluded = try store.excludeConfirmed(sinceRunID: "r2", sourceIDs: [source], at: t0)
        #expect(excluded == [sha(2), sha(3), sha(4)].sorted())
        #expect(try store.exclusions(sourceID: source) == excluded)
        #expect(throws: ReconcileStoreError.self) { try store.excludeConfirmed(sinceRunID: "nope", sourceIDs: [source], at: t0) }
    }

    @Test func trashedAssetsLeaveTheListingAndComeBackOnRestore() throws {
        let (_, catalog, _, _) = try open()
        let asset = AssetRecord(checksum: sha(1), kind: .photo, size: 10, originalExtension: "jpg", firstSourcePath: "a.jpg",
                                originalPath: "originals/01/01/x.jpg", importedAt: t0, runID: "imp")
        try catalog.insertAssets([asset, AssetRecord(checksum: sha(2), kind: .video, size: 5, originalExtension: "mov",
                                                     firstSourcePath: "b.mov", originalPath: "o/b", importedAt: t0, runID: nil)])
        try catalog.markTrashed([(sha(1), ["originals/01/01/x.jpg", "derived/01/x-thumb.jpg"])], runID: "t1", at: t0)
        #expect(try catalog.assetChecksums() == [sha(2)])
        let trashed = try catalog.trashedAssets(runID: "t1")
        #expect(trashed.count == 1 && trashed[0].asset == asset && trashed[0].libraryPaths.count == 2)

        #expect(try catalog.restoreTrashed([sha(1)], runID: "t1") == [sha(1)])
        #expect(try catalog.asset(sha(1)) == asset)
        #expect(try catalog.trashedAssets().isEmpty)

        try catalog.markTrashed([(sha(2), ["o/b"])], runID: "t2", at: t0)
        try catalog.forgetTrashed(runIDs: ["t2"])
        #expect(try catalog.trashedAssets().isEmpty && catalog.asset(sha(2)) == nil)
    }
}
