import CairnCatalog
import CairnCore
import CairnReconcile

// The one place where the reconciliation engine's values meet what the catalog stores: the catalog keeps its own
// plain records (`StoredReconcileState`, `ReconcileStoreChanges`, `SyncRecord`), converted here, so storage never
// depends on the engine.

extension ReconcileStore {
    /// The engine's state for a source, from its stores.
    public func loadState(sourceID: Int64) throws -> ReconcileState {
        let stored = try storedState(sourceID: sourceID)
        return ReconcileState(observed: stored.observed, confirmed: ConfirmedDeletions(stored.confirmed),
                              exclusions: stored.exclusions, approved: stored.approved, anchors: EditAnchors(stored.anchors))
    }

    /// Applies the engine's `delta` in one transaction (see `apply(_:sourceID:runID:)` for the stores' semantics).
    public func apply(_ delta: StoreDelta, sourceID: Int64, runID: String? = nil) throws {
        try apply(ReconcileStoreChanges(delta), sourceID: sourceID, runID: runID)
    }

    /// Everything a sync learned, in one transaction (see `commit(_:sourceID:current:)`).
    public func commit(_ outcome: Reconciler.Outcome, sourceID: Int64, current: [String: Checksum],
                       scan: SourceScanFacts) throws {
        try commit(SyncRecord(outcome, scan: scan), sourceID: sourceID, current: current)
    }
}

extension ReconcileStoreChanges {
    init(_ delta: StoreDelta) {
        self.init(stampedAt: delta.stampedAt)
        observedAdded = delta.observedAdded
        reappeared = delta.reappeared
        confirmedStamped = delta.confirmedStamped
        anchorsAdded = delta.anchorsAdded
        anchorsReleased = delta.anchorsReleased
    }
}

extension SyncRecord {
    init(_ outcome: Reconciler.Outcome, scan: SourceScanFacts) {
        self.init(runID: outcome.plan.runID, now: outcome.plan.now, changes: ReconcileStoreChanges(outcome.delta),
                  advanceSnapshot: outcome.delta.advanceSnapshot, sourceHasMarker: scan.hasMarker,
                  pending: PendingEntry.entries(of: outcome.plan))
    }
}

extension PendingEntry {
    /// What a plan leaves waiting, each with its status, for `pending list`.
    static func entries(of plan: ReconciliationPlan) -> [PendingEntry] {
        var pending = plan.pendingReview.map { PendingEntry(checksum: $0.checksum, status: .review) }
        pending += plan.heldByQuarantine.map {
            PendingEntry(checksum: $0.checksum, status: .quarantine, confirmedAt: $0.confirmedAt, eligibleAt: $0.eligibleAt)
        }
        pending += plan.heldBySafetyRail.map { PendingEntry(checksum: $0.checksum, status: .held, confirmedAt: $0.confirmedAt) }
        pending += plan.deferredByCap.map { PendingEntry(checksum: $0.checksum, status: .deferred, confirmedAt: $0.confirmedAt) }
        pending += plan.deleteCandidates.map {
            PendingEntry(checksum: $0.checksum, status: $0.basis == .approved ? .approved : .eligible, confirmedAt: $0.confirmedAt)
        }
        return pending
    }
}
