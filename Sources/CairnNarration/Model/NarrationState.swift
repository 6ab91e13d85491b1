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
    /// The newest activity of the run (`newestFirst`), capped so a long run stays cheap.
    public private(set) var activity: RingBuffer<ActivityEntry>
    public private(set) var counts = RunCounts()
    /// The newest progress of each phase that reported any.
    public private(set) var progress: [SyncPhase: ProgressSnapshot] = [:]
    public private(set) var lanes: [LaneOccupancy] = []
    public private(set) var failures: [FileFailure] = []
    public private(set) var lastEventTime: Date?

    public static let defaultActivityCapacity = 50

    public init(activityCapacity: Int = NarrationState.defaultActivityCapacity, lastSuccessfulSync: Date? = nil) {
        activity = RingBuffer(capacity: activityCapacity)
        self.lastSuccessfulSync = lastSuccessfulSync
    }

    /// The phase the run is in.
    public var currentPhase: SyncPhase? { timeline.currentPhase }

    public mutating func apply(_ record: NarrationRecord) {
        lastEventTime = record.time
        if let counts = record.event.counts { self.counts = counts }
        switch record.event {
        case .runStart(let command):
            let keepSuccess = lastSuccessfulSync
            self = NarrationState(activityCapacity: activity.capacity, lastSuccessfulSync: keepSuccess)
            lastEventTime = record.time
            runID = record.runID
            self.command = command
            startedAt = record.time
            status = .syncing
        case .phaseStart(let phase, _):
            timeline.start(phase, at: record.time)
        case .phaseEnd(let phase, _, _):
            timeline.end(phase, at: record.time)
        case .progress(let phase, let snapshot, _, let lanes):
            progress[phase] = snapshot
            if let lanes { self.lanes = lanes }
        case .error(let message, _, let file?, _):
            if failures.count < Self.maximumRecordedFailures { failures.append(FileFailure(path: file, reason: message)) }
        case .runEnd(let end):
            endedAt = record.time
            timeline.endAll(at: record.time)
            lanes = []
            if end.outcome == .success {
                status = .success
                lastSuccessfulSync = record.time
            } else {
                status = .ended(end.outcome, message: end.message ?? "failed", needsAuth: end.needsAuth ?? false)
            }
        case .tape(let news) where news.stage == .clipSkipped:
            if failures.count < Self.maximumRecordedFailures {
                failures.append(FileFailure(path: news.path ?? "", reason: news.reason ?? ""))
            }
        case .hashed, .imported, .derived, .stamped, .destinationChecked, .note, .warning, .error, .tape:
            break
        }
        // A file's derivatives and a tape's segments are not activity a person follows: the file's `imported` line
        // and the clip's `tapeClipReady` say it is done.
        if ![.progress, .derived, .tapeSegment].contains(record.kind) {
            activity.append(ActivityEntry(time: record.time, kind: record.kind, detail: Self.activityDetail(record.event)))
        }
    }

    /// Replays a run's events (for example from its run log).
    public static func replay(_ records: some Sequence<NarrationRecord>, lastSuccessfulSync: Date? = nil) -> NarrationState {
        var state = NarrationState(lastSuccessfulSync: lastSuccessfulSync)
        for record in records { state.apply(record) }
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
        switch event {
        case .runStart(let command): return "\(command) started"
        case .phaseStart(let phase, let detail): return detail.map { "\(phase.displayName): \($0)" } ?? phase.displayName
        case .phaseEnd(let phase, let duration, _): return "\(phase.displayName) done in \(NarrationFormat.duration(duration))"
        case .hashed(let file), .imported(let file, _): return NarrationFormat.fileName(file)
        case .derived(let file, _, let role): return "\(role) of \(NarrationFormat.fileName(file))"
        case .stamped(let count): return "\(NarrationFormat.count(count)) confirmed deleted"
        case .destinationChecked(let drift): return drift.description
        case .error(let message, _, let file, _): return file.map { "\($0): \(message)" } ?? message
        case .note(let message, _), .warning(let message, _, _): return message
        case .runEnd(let end): return end.outcome == .success ? "finished" : "failed: \(end.message ?? "")"
        case .tape(let news): return tapeDetail(news)
        case .progress: return ""
        }
    }

    static func tapeDetail(_ news: TapeEvent) -> String {
        let file = news.path.map(NarrationFormat.fileName) ?? ""
        switch news.stage {
        case .started: return "tape \(news.tape ?? ""): \(news.clips ?? 0) clips"
        case .segment: return "segment \(news.segment ?? 0) of clip \((news.clip ?? 0) + 1)"
        case .clipReady: return "clip \(news.clipsReady ?? 0) of \(news.clips ?? 0): \(file)"
        case .clipSkipped: return "\(file): \(news.reason ?? "")"
        case .playable: return "playable: \(news.clipsReady ?? 0) of \(news.clips ?? 0) clips"
        case .finished: return "tape \(news.tape ?? ""): \(news.encoded ?? 0) clips made, \(news.reused ?? 0) reused"
        }
    }
}

extension SyncPhase {
    /// "Hashing", as a person reads it.
    public var displayName: String {
        switch self {
        case .idle: return "Idle"
        case .preparing: return "Preparing"
        case .hashing: return "Hashing"
        case .reconciling: return "Reconciling"
        case .importing: return "Importing"
        case .finalizing: return "Finalizing"
        }
    }
}
