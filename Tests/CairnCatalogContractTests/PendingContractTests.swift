import CairnCatalog
import CairnCore
import CairnReconcileOracle
import Foundation
import Testing

/// What every catalog backend must do with a sync's commit and the `cairn pending` verbs: each test runs on every
/// `CatalogBackend` with the same expectations.
@Suite struct PendingContractTests {
    static func checksum(_ number: Int) -> Checksum { Checksum(hex: String(format: "%040x", number))! }
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test(arguments: CatalogBackend.allCases)
    func aSyncCommitsItsChangesSnapshotFactsAndWaitingListAtOnce(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            let other = try await catalog.sourceID(forRoot: "/camera")
            let delta = StoreDelta(observedAdded: (1...4).map(Self.checksum), confirmedStamped: [Self.checksum(3), Self.checksum(4)],
                                   stampedAt: Self.now, anchorsAdded: ["a.jpg": Self.checksum(1)], advanceSnapshot: true)
            let waiting = [
                PendingEntry(checksum: Self.checksum(4), status: .quarantine, confirmedAt: Self.now,
                             eligibleAt: Self.now.addingTimeInterval(86_400 * 30)),
                PendingEntry(checksum: Self.checksum(3), status: .eligible, confirmedAt: Self.now, eligibleAt: Self.now),
            ]
            let current = ["a.jpg": Self.checksum(1), "b.jpg": Self.checksum(2)]
            try await catalog.commitSync(SyncRecord(runID: "sync-1", now: Self.now, changes: delta, advanceSnapshot: true,
                                                    sourceHasMarker: true, pending: waiting), sourceID: source, current: current)
            try await catalog.commitSync(SyncRecord(runID: "sync-0", now: Self.now, changes: StoreDelta(stampedAt: Self.now, advanceSnapshot: false),
                                                    advanceSnapshot: false, sourceHasMarker: false,
                                                    pending: [PendingEntry(checksum: Self.checksum(9), status: .review)]),
                                         sourceID: other, current: [:])

            #expect(try await catalog.reconcileState(sourceID: source) == ReconcileState().applying(delta))
            #expect(try await catalog.healthySnapshot(sourceID: source) == current)
            let facts = try await catalog.reconcileFacts(sourceID: source)
            #expect(facts.firstRunDone && facts.hadMarker && facts.lastSyncRunID == "sync-1" && facts.lastHealthyRunID == "sync-1")
            #expect(facts.lastHealthyFileCount == 2 && facts.lastHealthyScanAt == Self.now)
            let unhealthy = try await catalog.reconcileFacts(sourceID: other)
            #expect(!unhealthy.firstRunDone && unhealthy.lastSyncRunID == "sync-0" && unhealthy.lastHealthyRunID == nil)
            #expect(try await catalog.healthySnapshot(sourceID: other).isEmpty)

            let listed = try await catalog.pending(sourceID: nil)
            #expect(listed.map(\.checksum) == [Self.checksum(3), Self.checksum(4), Self.checksum(9)])
            #expect(listed.map(\.status) == [.eligible, .quarantine, .review])
            #expect(listed.map(\.runID) == ["sync-1", "sync-1", "sync-0"])
            #expect(listed[1].eligibleAt == Self.now.addingTimeInterval(86_400 * 30))
            #expect(try await catalog.pending(sourceID: other).map(\.checksum) == [Self.checksum(9)])

            // The next sync replaces its source's waiting list only.
            try await catalog.commitSync(SyncRecord(runID: "sync-2", now: Self.now, changes: StoreDelta(stampedAt: Self.now, advanceSnapshot: true),
                                                    advanceSnapshot: true, sourceHasMarker: true, pending: []),
                                         sourceID: source, current: current)
            #expect(try await catalog.pending(sourceID: nil).map(\.checksum) == [Self.checksum(9)])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func approvingAndExcludingUndoEachOtherAndOnlyObservedContentIsApproved(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            let first = Self.now, later = Self.now.addingTimeInterval(3600)
            try await catalog.startRun(RunRecord(id: "sync-1", command: "sync", sourceID: source, startedAt: first))
            try await catalog.startRun(RunRecord(id: "sync-2", command: "sync", sourceID: source, startedAt: later))
            try await catalog.commitSync(SyncRecord(
                runID: "sync-1", now: first,
                changes: StoreDelta(observedAdded: (1...5).map(Self.checksum), confirmedStamped: [Self.checksum(1), Self.checksum(2)],
                                    stampedAt: first, advanceSnapshot: true),
                advanceSnapshot: true, sourceHasMarker: true,
                pending: [PendingEntry(checksum: Self.checksum(1), status: .quarantine), PendingEntry(checksum: Self.checksum(2), status: .review)]),
                sourceID: source, current: [:])
            try await catalog.applyReconcileDelta(StoreDelta(confirmedStamped: [Self.checksum(3)], stampedAt: later, advanceSnapshot: true),
                                                  sourceID: source, runID: "sync-2")

            let refusal = await #expect(throws: ReconcileStoreError.self) {
                try await catalog.approve([Self.checksum(2), Self.checksum(77)], sourceIDs: [source], at: later)
            }
            #expect(refusal?.description.contains(Self.checksum(77).hex) == true)
            #expect(try await catalog.reconcileState(sourceID: source).approved.isEmpty, "nothing approved")

            try await catalog.approve([Self.checksum(2)], sourceIDs: [source], at: later)
            #expect(try await catalog.reconcileState(sourceID: source).approved == [Self.checksum(2)])
            #expect(try await catalog.pending(sourceID: source).map(\.status) == [.approved, .quarantine])

            try await catalog.exclude([Self.checksum(2)], sourceIDs: [source], at: later)
            var state = try await catalog.reconcileState(sourceID: source)
            #expect(state.approved.isEmpty && state.exclusions == [Self.checksum(2)])
            #expect(try await catalog.pending(sourceID: source).map(\.checksum) == [Self.checksum(1)])
            try await catalog.approve([Self.checksum(2)], sourceIDs: [source], at: later)
            state = try await catalog.reconcileState(sourceID: source)
            #expect(state.approved == [Self.checksum(2)] && state.exclusions.isEmpty)

            // Everything sync-2 confirmed, or later; by its stamp.
            #expect(try await catalog.excludeConfirmed(sinceRunID: "sync-2", sourceIDs: [source], at: later) == [Self.checksum(3)])
            #expect(try await catalog.excludeConfirmed(sinceRunID: "sync-1", sourceIDs: [source], at: later)
                    == [Self.checksum(1), Self.checksum(2), Self.checksum(3)])
            state = try await catalog.reconcileState(sourceID: source)
            #expect(state.exclusions == Set((1...3).map(Self.checksum)) && state.approved.isEmpty)
            #expect(try await catalog.pending(sourceID: source).isEmpty)
            await #expect(throws: ReconcileStoreError.self) {
                try await catalog.excludeConfirmed(sinceRunID: "no-such-run", sourceIDs: [source], at: later)
            }

            try await catalog.commitSync(SyncRecord(runID: "sync-3", now: later, changes: StoreDelta(stampedAt: later, advanceSnapshot: true),
                                                    advanceSnapshot: true, sourceHasMarker: true,
                                                    pending: [PendingEntry(checksum: Self.checksum(4), status: .eligible)]),
                                         sourceID: source, current: [:])
            try await catalog.removePending([Self.checksum(4), Self.checksum(5)])
            #expect(try await catalog.pending(sourceID: nil).isEmpty)
        }
    }
}
