import CairnCore
import Foundation

/// Everything a view needs about the current (or last) run, rebuilt from events alone.
///
/// Pure: `apply` is the only way in, so a live renderer, a test and a replay of a run log all agree.
public struct NarrationState: Sendable {
    public static let maximumRecordedFailures = 1000

    public private(set) var runID: String?
    public private(set) var command: String?
    public private(set) var startedAt: Date?
    public private(set) var endedAt: Date?
    public private(set) var status: RunStatus = .idle
    public private(set) var lastSuccessfulSync: Date?
    public private(set) var timeline = PhaseTimeline()
    public private(set) var activity: ActivityFeed
    public private(set) var counts = RunCounts()
    /// The newest progress of each phase that reported any.
    public private(set) var progress: [SyncPhase: ProgressSnapshot] = [:]
    public private(set) var lanes: [LaneOccupancy] = []
    public private(set) var failures: [FileFailure] = []
    /// Latest `fetched` page and page count, for the concurrent server track.
    public private(set) var fetchedPage: (page: Int, of: Int?)?
    public private(set) var lastEventTime: Date?

    public init(activityCapacity: Int = ActivityFeed.defaultCapacity, lastSuccessfulSync: Date? = nil) {
        activity = ActivityFeed(capacity: activityCapacity)
        self.lastSuccessfulSync = lastSuccessfulSync
    }

    /// The phase the main track is in (never `fetchingServer`, which runs beside it).
    public var currentPhase: SyncPhase? { timeline.currentMainPhase }

    public mutating func apply(_ event: NarrationEvent) {
        lastEventTime = event.time
        if let counts = event.counts { self.counts = counts }
        switch event.kind {
        case .runStart:
            let keepSuccess = lastSuccessfulSync
            self = NarrationState(activityCapacity: activity.capacity, lastSuccessfulSync: keepSuccess)
            lastEventTime = event.time
            runID = event.runID
            command = event.command
            startedAt = event.time
            status = .syncing
        case .phaseStart:
            if let phase = event.phase { timeline.start(phase, at: event.time) }
        case .phaseEnd:
            if let phase = event.phase { timeline.end(phase, at: event.time) }
        case .progress:
            if let phase = event.phase, let snapshot = event.progress { progress[phase] = snapshot }
            if let lanes = event.lanes { self.lanes = lanes }
        case .fetched:
            if let page = event.page { fetchedPage = (page, event.pageCount) }
        case .error:
            if let file = event.file, failures.count < Self.maximumRecordedFailures {
                failures.append(FileFailure(path: file, reason: event.message ?? "failed"))
            }
        case .runEnd:
            endedAt = event.time
            timeline.endAll(at: event.time)
            lanes = []
            if event.status == .failed {
                status = .failed(message: event.message ?? "failed", needsAuth: event.needsAuth ?? false)
            } else {
                status = .success
                lastSuccessfulSync = event.time
            }
        case .hashed, .imported, .stamped, .note, .warning:
            break
        }
        if event.kind != .progress {
            activity.append(ActivityEntry(time: event.time, kind: event.kind, detail: Self.activityDetail(event)))
        }
    }

    /// Replays a run's events (for example from its run log).
    public static func replay(_ events: some Sequence<NarrationEvent>, lastSuccessfulSync: Date? = nil) -> NarrationState {
        var state = NarrationState(lastSuccessfulSync: lastSuccessfulSync)
        for event in events { state.apply(event) }
        return state
    }

    /// The run as the catalog and `cairn status` keep it; nil before any `runStart`.
    public func summary(review: ReviewInfo? = nil) -> RunSummary? {
        guard let runID, let startedAt else { return nil }
        return RunSummary(
            runID: runID, command: command, startedAt: startedAt, endedAt: endedAt, status: status,
            timeline: timeline.entries, counts: counts, failures: failures, review: review)
    }

    static func activityDetail(_ event: NarrationEvent) -> String {
        let phaseName = event.phase?.displayName ?? ""
        switch event.kind {
        case .runStart: return "\(event.command ?? "run") started"
        case .phaseStart: return event.message.map { "\(phaseName): \($0)" } ?? phaseName
        case .phaseEnd: return "\(phaseName) done in \(NarrationFormat.duration(event.durationSeconds ?? 0))"
        case .hashed, .imported: return event.file.map(NarrationFormat.fileName) ?? ""
        case .fetched:
            var text = "server page \(event.page ?? 0)"
            if let pages = event.pageCount { text += " of \(pages)" }
            if let items = event.count { text += " (\(NarrationFormat.count(items)) items)" }
            return text
        case .stamped: return "\(NarrationFormat.count(event.count ?? 0)) confirmed deleted"
        case .error:
            if let file = event.file { return "\(file): \(event.message ?? "failed")" }
            return event.message ?? "error"
        case .note, .warning: return event.message ?? ""
        case .runEnd:
            return event.status == .failed ? "failed: \(event.message ?? "")" : "finished"
        case .progress: return ""
        }
    }
}

extension SyncPhase {
    /// "Fetching server", as a person reads it.
    public var displayName: String {
        switch self {
        case .idle: return "Idle"
        case .preparing: return "Preparing"
        case .fetchingServer: return "Fetching server"
        case .hashing: return "Hashing"
        case .reconciling: return "Reconciling"
        case .importing: return "Importing"
        case .finalizing: return "Finalizing"
        }
    }
}
