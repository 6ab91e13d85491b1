import CairnCatalog
import CairnCore
import CairnReconcile

// Where the reconciliation engine's plan meets what the catalog stores (`PendingEntry`).

extension PendingEntry {
    /// What a plan leaves waiting, each with its status, for `pending list`.
    package static func entries(of plan: ReconciliationPlan) -> [PendingEntry] {
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
