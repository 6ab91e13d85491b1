import CairnCore
import CairnNarration
import Foundation

/// Keeps a run's `LibraryMetrics` current from its narration, and hands a copy to `onBoundary` at every phase
/// start and end and at the run's end: a cron run's metrics file is rewritten there, so a run that hangs shows
/// as one (its phase start stays old). Tallies under its own lock; the writing happens outside it.
public final class RunMetricsRecorder: NarrationHandler, Sendable {
    private struct State {
        var narration = NarrationState(activityCapacity: 1)
        var metrics: LibraryMetrics

        var snapshot: LibraryMetrics {
            var metrics = metrics
            metrics.lastRun = narration.summary()
            return metrics
        }
    }

    private let state: Locked<State>
    private let onBoundary: @Sendable (LibraryMetrics) -> Void

    /// - Parameter base: what the catalog says before the run (last success, library content, reconciliation).
    public init(base: LibraryMetrics, onBoundary: @escaping @Sendable (LibraryMetrics) -> Void = { _ in }) {
        var base = base
        base.runInProgress = true
        state = Locked(State(metrics: base))
        self.onBoundary = onBoundary
    }

    public func handle(_ record: NarrationRecord) {
        let boundary = state.withLock { state -> LibraryMetrics? in
            state.narration.apply(record)
            switch record.event {
            case .error(_, let phase, _?, let category):
                let key = FailureKey(phase: phase?.rawValue ?? "unknown", reason: category ?? .other)
                state.metrics.failures[key, default: 0] += 1
            case .progress(let phase, let snapshot, _, let lanes):
                if let lanes { state.metrics.lanes = lanes }
                if phase == .importing {
                    state.metrics.bytesTransferred = max(state.metrics.bytesTransferred, snapshot.bytesCompleted)
                }
            case .runEnd:
                state.metrics.runInProgress = false
                state.metrics.lanes = []
            default:
                break
            }
            switch record.kind {
            case .runStart, .phaseStart, .phaseEnd, .runEnd: return state.snapshot
            default: return nil
            }
        }
        if let boundary { onBoundary(boundary) }
    }

    /// The metrics now.
    public var current: LibraryMetrics { state.withLock { $0.snapshot } }
}
