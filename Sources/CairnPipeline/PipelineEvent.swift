import CairnCore

/// What the scheduler reports as it goes, for narration and logs. Delivered synchronously from the
/// scheduler, so handlers should be quick (hand off to a buffer).
public enum PipelineEvent: Sendable {
    /// Every persisted state change.
    case transitioned(ImportItem, from: ItemState, to: ItemState)
    /// What a phase made (its stage's products), handed to the store with the item's move.
    case produced(ImportItem, any StageProducts)
    /// A phase try began (`attempt` is 1-based).
    case phaseStarted(ImportItem, Lane, attempt: Int)
    case timedOut(ImportItem, Lane, after: Duration)
    case retryScheduled(ImportItem, Lane, attempt: Int, delay: Duration, reason: FailureReason)
    /// An item finished `lane` but the next lane's inbox is full: it holds its slot until there is room.
    case backPressure(ImportItem, lane: Lane)
    /// In-flight work left behind at the cancellation deadline; the item resumes there next run.
    case abandoned(ImportItem, Lane)
    /// No new work will start.
    case stopping(StopReason)
    /// After every state change.
    case progress(PipelineProgress)
}

/// Why a run stopped taking new work before the end.
public enum StopReason: String, Hashable, Sendable, Codable {
    /// `cancel(deadline:)`: a signal.
    case interrupted
    /// `maxErrors` items failed.
    case errorLimit
    /// The item store failed; nothing more could be recorded.
    case storeFailed
}
