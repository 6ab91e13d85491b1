import CairnCore
import CairnMedia

/// Runs blocking work (a parallel hash, file copies, fsync, FFmpeg, SQLite) on `BlockingPool`, off Swift's cooperative
/// pool, so slow system calls never starve the tasks that schedule and narrate, counted by the run's `WorkTracker`.
/// The lanes' widths bound how many run at once. Work tracked for a run is a phase's: cancelling the awaiting task
/// (a timed-out phase) interrupts media work, while plain work finishes (or fails) on its thread and its result is
/// ignored. A run that ends with such work still running (past its grace) stops waiting for it (`Abandonment`);
/// the tracker counts it until it returns. Untracked work is always waited for.
package enum BlockingWork {
    package static func run<Value: Sendable>(tracking tracker: WorkTracker? = nil,
                                     _ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        guard let tracker else { return try await BlockingPool.run(body) }
        tracker.started()
        return try await BlockingPool.runAbandonable {
            defer { tracker.ended() }
            return try body()
        }
    }

    /// As `run`, for media work: cancelling the awaiting task (a phase's timeout, a stopping run) interrupts the
    /// engine call through the `MediaInterrupt` handed to `body`, so the work returns instead of running on.
    package static func run<Value: Sendable>(tracking tracker: WorkTracker? = nil,
                                     interruptible body: @escaping @Sendable (MediaInterrupt) throws -> Value) async throws -> Value {
        let interrupt = MediaInterrupt()
        return try await withTaskCancellationHandler {
            try await run(tracking: tracker) { try body(interrupt) }
        } onCancel: {
            interrupt.interrupt()
        }
    }
}

/// Counts one run's blocking work that has started and not returned, abandoned (timed-out) phases included.
/// A run waits for it before it lets go of the library, so no abandoned phase writes the catalog after the
/// lock is released and the catalog closed.
package final class WorkTracker: Sendable {
    private struct State {
        var running = 0
        /// Tasks waiting for `running` to reach 0, by a number of their own (a cancelled wait leaves alone).
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Locked(State())

    package init() {}

    func started() { state.withLock { $0.running += 1 } }

    func ended() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    var running: Int { state.withLock { $0.running } }

    /// Runs `body`, then waits (up to `limit`) until none of this run's work is running, whether `body` returned or
    /// threw: abandoned (timed-out) phases finish before the caller lets go of the library.
    package func settling<Value>(limit: Duration = .seconds(120), _ body: () async throws -> Value) async throws -> Value {
        try await closing({ await waitUntilIdle(limit: limit) }, body)
    }

    /// Waits (up to `limit`) until none of this run's work is running; returns whether it got there. Woken by the
    /// last `ended()`, not by polling.
    @discardableResult
    func waitUntilIdle(limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.idle(); return !Task.isCancelled }
            group.addTask { try? await Task.sleep(for: limit); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first || running == 0
        }
    }

    /// Returns once nothing runs, or once the waiting task is cancelled.
    private func idle() async {
        let number = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let parked = state.withLock { state in
                    guard state.running > 0, !Task.isCancelled else { return false }
                    state.waiters[number] = continuation
                    return true
                }
                if !parked { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: number) }?.resume()
        }
    }
}
