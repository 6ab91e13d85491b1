import CairnCore
import Foundation

/// A file that failed, and why, in one line.
public struct FileFailure: Codable, Sendable, Equatable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) { self.path = path; self.reason = reason }
}

/// What waits for a person after reconciliation.
public struct ReviewInfo: Codable, Sendable, Equatable {
    /// Deletion candidates held for review (strict mode, or a safety rail fired).
    public var pendingCount: Int
    /// Candidates held by the quarantine period.
    public var quarantinedCount: Int
    /// When the earliest quarantined item may be trashed; nil when none is quarantined.
    public var nextQuarantineEligibility: Date?

    public init(pendingCount: Int, quarantinedCount: Int = 0, nextQuarantineEligibility: Date? = nil) {
        self.pendingCount = pendingCount
        self.quarantinedCount = quarantinedCount
        self.nextQuarantineEligibility = nextQuarantineEligibility
    }
}

/// One run's outcome, timeline and counts: what the catalog keeps and `cairn status` prints.
public struct RunSummary: Codable, Sendable, Equatable {
    public var runID: String
    public var command: String?
    public var startedAt: Date
    public var endedAt: Date?
    public var status: RunStatus
    public var timeline: [PhaseEntry]
    public var counts: RunCounts
    /// The first failures with reasons (at most `NarrationState.maximumRecordedFailures`; `counts.failed` has them all).
    public var failures: [FileFailure]
    public var review: ReviewInfo?

    public init(
        runID: String, command: String? = nil, startedAt: Date, endedAt: Date? = nil, status: RunStatus,
        timeline: [PhaseEntry] = [], counts: RunCounts = RunCounts(), failures: [FileFailure] = [],
        review: ReviewInfo? = nil
    ) {
        self.runID = runID; self.command = command; self.startedAt = startedAt; self.endedAt = endedAt
        self.status = status; self.timeline = timeline; self.counts = counts; self.failures = failures
        self.review = review
    }

    public var durationSeconds: Double? { endedAt.map { max(0, $0.timeIntervalSince(startedAt)) } }

    enum CodingKeys: String, CodingKey {
        case runID = "runId", command, startedAt, endedAt, status, timeline, counts, failures, review
    }
}
