import CairnCore

/// Queues work handed in one item at a time by many callers in shared statements: an item that arrives while a
/// statement is on its way joins the next, so a burst of lanes costs one statement and one NOTIFY per batch,
/// and a lone item goes at once.
public final class EnqueueBatcher: Sendable {
    private struct State {
        var pending: [(work: QueuedWork, caller: CheckedContinuation<Int64, any Error>)] = []
        var sending = false
    }

    private let queue: PostgresWorkQueue
    private let state = Locked(State())

    public init(queue: PostgresWorkQueue) { self.queue = queue }

    /// The job that does `work` (queued now, or the one already waiting or running for its key).
    public func enqueue(_ work: QueuedWork) async throws -> Int64 {
        try await withCheckedThrowingContinuation { caller in
            let starts = state.withLock { state -> Bool in
                state.pending.append((work, caller))
                if state.sending { return false }
                state.sending = true
                return true
            }
            if starts { Task { await self.send() } }
        }
    }

    private func send() async {
        while let batch = state.withLock({ state -> [(work: QueuedWork, caller: CheckedContinuation<Int64, any Error>)]? in
            guard !state.pending.isEmpty else { state.sending = false; return nil }
            defer { state.pending = [] }
            return state.pending
        }) {
            do {
                let jobs = try await queue.enqueue(batch.map(\.work))
                for (entry, job) in zip(batch, jobs) { entry.caller.resume(returning: job) }
            } catch {
                for entry in batch { entry.caller.resume(throwing: error) }
            }
        }
    }
}
