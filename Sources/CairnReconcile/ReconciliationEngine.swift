import CairnCore
import Foundation

/// The pure, deterministic heart of reconciliation: sets in, plan out. No I/O, no clock.
public enum ReconciliationEngine {
    /// The plan once the absent content is known (the catalog works it out in SQL for a sync): approval, then
    /// quarantine, then strictness decide each item; the rails and the cap decide what may go this run.
    public static func plan(
        absent: [AbsentContent], importCandidates: [Checksum], settings: ReconcileSettings, now: Date, runID: String,
        rails: RailInputs
    ) -> ReconciliationPlan {
        var deletable: [DeleteCandidate] = []
        var review: [ReviewItem] = []
        var quarantined: [QuarantineHold] = []
        for item in absent {
            let checksum = item.checksum
            let confirmedAt = item.confirmedAt
            if item.approved {
                deletable.append(DeleteCandidate(checksum: checksum, basis: .approved, confirmedAt: confirmedAt))
            } else if let confirmedAt {
                let eligibleAt = confirmedAt.addingTimeInterval(settings.quarantineInterval)
                if now >= eligibleAt {
                    deletable.append(DeleteCandidate(checksum: checksum, basis: .confirmed, confirmedAt: confirmedAt))
                } else {
                    quarantined.append(QuarantineHold(checksum: checksum, confirmedAt: confirmedAt, eligibleAt: eligibleAt))
                }
            } else {
                switch settings.strictness {
                case .trusting: deletable.append(DeleteCandidate(checksum: checksum, basis: .unconfirmed))
                case .strict: review.append(ReviewItem(checksum: checksum))
                }
            }
        }
        deletable.sort(by: trashOrder)
        review.sort { $0.checksum < $1.checksum }
        quarantined.sort { ($0.eligibleAt, $0.checksum) < ($1.eligibleAt, $1.checksum) }

        var verdict = SafetyVerdict(holds: SafetyRails.assessSource(rails, settings: settings))
        if let warning = SafetyRails.massOffloadWarning(
            confirmedThisRun: rails.confirmedThisRun, runID: runID, settings: settings) {
            verdict.warnings.append(warning)
        }

        var plan = ReconciliationPlan(
            runID: runID, now: now, importCandidates: importCandidates,
            pendingReview: review, heldByQuarantine: quarantined, verdict: verdict)
        if verdict.holdsEveryDeletion {
            plan.heldBySafetyRail = deletable
        } else if let cap = settings.maxDelete, deletable.count > cap {
            plan.deleteCandidates = Array(deletable.prefix(cap))
            plan.deferredByCap = Array(deletable.dropFirst(cap))
            plan.verdict.limits.append(RailTrip(.maxDeleteCap,
                "max-delete \(cap) reached: \(deletable.count - cap) more deletion(s) wait for the next run"))
        } else {
            plan.deleteCandidates = deletable
        }
        return plan
    }

    /// Approved first (the user asked), then the oldest confirmations, then unconfirmed; ties by checksum.
    static func trashOrder(_ a: DeleteCandidate, _ b: DeleteCandidate) -> Bool {
        func rank(_ basis: DeletionBasis) -> Int {
            switch basis {
            case .approved: return 0
            case .confirmed: return 1
            case .unconfirmed: return 2
            }
        }
        let aDate = a.confirmedAt ?? .distantFuture, bDate = b.confirmedAt ?? .distantFuture
        if rank(a.basis) != rank(b.basis) { return rank(a.basis) < rank(b.basis) }
        if aDate != bDate { return aDate < bDate }
        return a.checksum < b.checksum
    }
}
