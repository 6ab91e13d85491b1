import CairnCatalog
import CairnCore
import CairnNarration
import CairnPipeline

/// Turns the scheduler's events into narration: an item ready, an item failed for good, each derived file made,
/// lane occupancy, and counts the bytes copied. (The importing total is the run's to announce: the scheduler sees a page at a time.)
package final class PipelineNarration: Sendable {
    private let narrator: Narrator
    private let configuration: PipelineConfiguration
    private struct State {
        var bytesCopied: Int64 = 0
    }
    private let state = Locked(State())

    package init(narrator: Narrator, configuration: PipelineConfiguration) {
        self.narrator = narrator
        self.configuration = configuration
    }

    package var bytesCopied: Int64 { state.withLock { $0.bytesCopied } }

    @Sendable package func copied(_ bytes: Int64) { state.withLock { $0.bytesCopied += bytes } }

    @Sendable package func handle(_ event: PipelineEvent) {
        switch event {
        case .transitioned(let item, _, let to):
            switch to {
            case .ready:
                narrator.imported(file: item.relativePath, bytes: item.byteCount, sha1: item.checksum.hex)
            case .failed(let failure) where !failure.retryable || failure.attempts >= configuration.maxAttempts:
                narrator.failed(file: item.relativePath,
                                reason: failure.reason, phase: .importing, bytes: item.byteCount)
            default:
                break
            }
        case .produced(let item, let products):
            // The files a phase made, in place (synced and renamed) before it returned.
            for file in (products as? StageRows)?.derivedFiles ?? [] {
                narrator.derived(file: item.relativePath, sha1: item.checksum.hex, role: file.role.rawValue)
            }
        case .progress(let progress):
            narrator.lanes(Lane.allCases.compactMap { progress.lanes[$0] })
        case .retryScheduled(let item, let lane, let attempt, _, let reason):
            narrator.retryScheduled(file: item.relativePath, lane: lane.rawValue, attempt: attempt, reason: reason)
        case .stopping(let reason):
            switch reason {
            case .interrupted: narrator.warning("stopping: no new work starts; work in flight may finish")
            case .errorLimit: narrator.warning("stopping: the error limit (--max-errors) was reached")
            case .storeFailed: narrator.error("stopping: the catalog cannot be written")
            }
        case .phaseStarted, .timedOut, .backPressure, .abandoned:
            break
        }
    }
}
