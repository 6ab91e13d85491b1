import CairnCore
import DequeModule

/// One lane's bookkeeping inside the scheduler.
///
/// Slots: an item holds one of the lane's `width` slots while its phase runs, and keeps holding it
/// after finishing if the next lane's inbox is full (`blocked`): that is the back-pressure that stops
/// a fast lane from running ahead of a slow one.
struct LaneQueue: Sendable {
    /// Items this run resumes directly into the lane (persisted, waiting); they feed the inbox.
    var backlog = Deque<ItemID>()
    /// Bounded: items waiting for a slot.
    var inbox = Deque<ItemID>()
    /// Items whose backoff elapsed; they go before the inbox and bypass its bound (each had a slot).
    var retryReady = Deque<ItemID>()
    /// Items running this lane's phase.
    var inFlight = Set<ItemID>()
    /// Items done with this lane, holding their slot until the next lane's inbox has room.
    var blocked = Deque<ItemID>()
    /// Phases that timed out (their items failed) whose blocking work has not returned: each holds a slot.
    var timedOutWork = 0

    var slotsUsed: Int { inFlight.count + blocked.count + timedOutWork }

    /// Work that is waiting for this lane (not running).
    var hasWaitingWork: Bool { !backlog.isEmpty || !inbox.isEmpty || !retryReady.isEmpty }

    var isIdle: Bool { !hasWaitingWork && inFlight.isEmpty && blocked.isEmpty }
}
