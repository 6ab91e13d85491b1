import CairnCore
import Foundation

/// Every file's outcome in a run the scheduler ran whole (`run(_:)`); a paged run hands them to its page source.
public struct OutcomeReport: Hashable, Sendable {
    public var entries: [FileOutcomeEntry]

    public func count(_ kind: FileOutcome.Kind) -> Int { entries.count { $0.outcome.kind == kind } }
}

/// What `PipelineScheduler.run` returns.
public struct PipelineRunResult: Hashable, Sendable {
    /// `success`, `someFailed`, `stoppedAtErrorLimit` (no new work taken; the rest resumes next run) or
    /// `interrupted` (`cancel(deadline:)`; the rest resumes next run).
    public var completion: RunOutcome
    public var report: OutcomeReport
    public var progress: PipelineProgress
    public var statistics: LaneStatistics

    public var exitStatus: ExitStatus { completion.exitStatus }
}

/// Lane occupancy seen during a run: evidence that back-pressure held.
public struct LaneStatistics: Hashable, Sendable {
    /// Most items ever waiting in each lane's inbox at once.
    public var maxInboxOccupancy: [Lane: Int] = [:]
    /// Most items ever worked on at once per lane.
    public var maxInFlight: [Lane: Int] = [:]

    public init() {}
}
