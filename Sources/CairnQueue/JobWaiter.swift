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

    /// How `job` ended, if it has; nil while it waits or runs. One query, no waiting.
    public func outcomeIfEnded(of job: Int64) async throws -> JobOutcome? {
        try await queue.outcomes(of: [job])[job]
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
