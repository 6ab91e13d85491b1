import CairnCore
import Foundation

/// Waits for queued jobs to end, for a producer that needs their results (an import recording its derivatives):
/// one connection listens for the queue's "ended" NOTIFYs, and each wakeup (or each `poll`, which catches what a
/// lost connection missed) reads the outcomes of every job still awaited in one query.
public final class JobWaiter: Sendable {
    private struct State {
        var waiters: [Int64: [Int: CheckedContinuation<JobOutcome, any Error>]] = [:]
        var nextTicket = 0
        /// `run` has returned: nothing will be delivered any more.
        var ended = false
    }

    private let queue: PostgresWorkQueue
    private let poll: Duration
    private let state = Locked(State())
    private let wakeup = Wakeup()

    public init(queue: PostgresWorkQueue, poll: Duration = .seconds(1)) {
        self.queue = queue
        self.poll = poll
    }

    /// How `job` ended; throws `CancellationError` when the task is cancelled first (the job itself goes on).
    public func outcome(of job: Int64) async throws -> JobOutcome {
        let ticket = state.withLock { state -> Int in
            defer { state.nextTicket += 1 }
            return state.nextTicket
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JobOutcome, any Error>) in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled || state.ended { return true }
                    state.waiters[job, default: [:]][ticket] = continuation
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) } else { wakeup.signal() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<JobOutcome, any Error>? in
                let continuation = state.waiters[job]?.removeValue(forKey: ticket)
                if state.waiters[job]?.isEmpty == true { state.waiters[job] = nil }
                return continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Delivers outcomes until the task is cancelled; those still waiting then get `CancellationError`.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.queue.keepListening(on: PostgresWorkQueue.endedChannel) { self.wakeup.signal() } }
            while !Task.isCancelled {
                await wakeup.wait(atMost: poll)
                let jobs = state.withLock { Array($0.waiters.keys) }
                guard !jobs.isEmpty, let outcomes = try? await queue.outcomes(of: jobs) else { continue }
                let ready = state.withLock { state in
                    outcomes.compactMap { job, outcome in state.waiters.removeValue(forKey: job).map { ($0, outcome) } }
                }
                for (continuations, outcome) in ready {
                    for continuation in continuations.values { continuation.resume(returning: outcome) }
                }
            }
            group.cancelAll()
        }
        let left = state.withLock { state in
            defer { state.waiters = [:]; state.ended = true }
            return state.waiters.values.flatMap(\.values)
        }
        for continuation in left { continuation.resume(throwing: CancellationError()) }
    }
}

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
