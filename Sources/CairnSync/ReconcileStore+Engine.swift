import CairnCatalog
import CairnCore
import CairnReconcile

// Where the reconciliation engine's outcome and plan meet what the catalog stores (`SyncRecord`, `PendingEntry`);
// the state and its changes (`ReconcileState`, `StoreDelta`) are Core values both read, so they need no converting.

extension ReconcileStore {
    /// Everything a sync learned, in one transaction (see `commit(_:sourceID:current:)`).
    public func commit(_ outcome: Reconciler.Outcome, sourceID: Int64, current: [String: Checksum],
                       scan: SourceScanFacts) throws {
        try commit(SyncRecord(outcome, scan: scan), sourceID: sourceID, current: current)
    }
}

extension SyncRecord {
    init(_ outcome: Reconciler.Outcome, scan: SourceScanFacts) {
        self.init(runID: outcome.plan.runID, now: outcome.plan.now, changes: outcome.delta,
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
