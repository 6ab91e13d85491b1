import CairnCore
import Foundation

/// Why a checksum may be trashed.
public enum DeletionBasis: String, Codable, Sendable {
    /// The user approved it (`cairn pending approve`).
    case approved
    /// Seen disappearing from the source, and its quarantine is over.
    case confirmed
    /// Observed once, absent now, never seen disappearing (trusting strictness only).
    case unconfirmed
}

/// A library checksum the plan would move to the trash.
public struct DeleteCandidate: Codable, Sendable, Equatable {
    public var checksum: Checksum
    public var basis: DeletionBasis
    /// When its deletion was confirmed at the source, if it was.
    public var confirmedAt: Date?

    public init(checksum: Checksum, basis: DeletionBasis, confirmedAt: Date? = nil) {
        self.checksum = checksum
        self.basis = basis
        self.confirmedAt = confirmedAt
    }
}

/// A confirmed deletion still inside its quarantine.
public struct QuarantineHold: Codable, Sendable, Equatable {
    public var checksum: Checksum
    public var confirmedAt: Date
    /// The first moment it may be trashed.
    public var eligibleAt: Date

    public init(checksum: Checksum, confirmedAt: Date, eligibleAt: Date) {
        self.checksum = checksum
        self.confirmedAt = confirmedAt
        self.eligibleAt = eligibleAt
    }
}

/// A checksum that waits for a person: absent from the source without proof it was deleted (strict strictness).
public struct ReviewItem: Codable, Sendable, Equatable {
    public var checksum: Checksum
    public init(checksum: Checksum) { self.checksum = checksum }
}

/// What one run will do. Every list is sorted, so equal inputs give equal plans, byte for byte.
public struct ReconciliationPlan: Codable, Sendable, Equatable {
    public var runID: String
    public var now: Date
    /// Source content the library does not hold yet.
    public var importCandidates: [Checksum]
    /// Trash these now (after every rail and the cap), oldest confirmation first.
    public var deleteCandidates: [DeleteCandidate]
    /// Would be trashed, but `maxDelete` was reached: they wait for the next run.
    public var deferredByCap: [DeleteCandidate]
    /// Would be trashed, but a safety rail holds every deletion this run.
    public var heldBySafetyRail: [DeleteCandidate]
    public var pendingReview: [ReviewItem]
    /// Confirmed deletions still in quarantine, soonest eligible first.
    public var heldByQuarantine: [QuarantineHold]
    public var verdict: SafetyVerdict

    public init(
        runID: String, now: Date, importCandidates: [Checksum] = [], deleteCandidates: [DeleteCandidate] = [],
        deferredByCap: [DeleteCandidate] = [], heldBySafetyRail: [DeleteCandidate] = [],
        pendingReview: [ReviewItem] = [], heldByQuarantine: [QuarantineHold] = [], verdict: SafetyVerdict = .init()
    ) {
        self.runID = runID
        self.now = now
        self.importCandidates = importCandidates
        self.deleteCandidates = deleteCandidates
        self.deferredByCap = deferredByCap
        self.heldBySafetyRail = heldBySafetyRail
        self.pendingReview = pendingReview
        self.heldByQuarantine = heldByQuarantine
        self.verdict = verdict
    }

    public var exitStatus: ExitStatus { verdict.exitStatus }
}

extension ReconciliationPlan {
    /// One line for logs and `dry-run`: "3 to import · 1 to trash · 2 held by quarantine (next eligible …) · 0 pending review".
    public var summary: String {
        var parts = ["\(importCandidates.count) to import", "\(deleteCandidates.count) to trash"]
        if !deferredByCap.isEmpty { parts.append("\(deferredByCap.count) deferred by max-delete") }
        if !heldBySafetyRail.isEmpty { parts.append("\(heldBySafetyRail.count) held by a safety rail") }
        var held = "\(heldByQuarantine.count) held by quarantine"
        if let next = heldByQuarantine.first?.eligibleAt { held += " (next eligible \(Timestamp.toTheSecond(next)))" }
        parts.append(held)
        parts.append("\(pendingReview.count) pending review")
        return parts.joined(separator: " · ")
    }
}
