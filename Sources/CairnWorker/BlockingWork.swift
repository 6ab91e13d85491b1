import CairnMedia
import Dispatch
import Foundation
import Synchronization

/// Runs blocking work (a parallel hash, file copies, fsync, FFmpeg, SQLite) on a Dispatch thread, off Swift's cooperative
/// pool, so slow system calls never starve the tasks that schedule and narrate. The lanes' widths bound
/// how many run at once. Cancelling the awaiting task does not stop plain work: a timed-out or abandoned
/// phase finishes (or fails) on its thread and its result is ignored; media work is interrupted.
enum BlockingWork {
    static func run<Value: Sendable>(tracking tracker: WorkTracker? = nil,
                                     _ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        tracker?.started()
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                let result = Result { try body() }
                tracker?.ended()
                continuation.resume(with: result)
            }
        }
    }

    /// As `run`, for media work: cancelling the awaiting task (a phase's timeout, a stopping run) interrupts the
    /// engine call through the `MediaInterrupt` handed to `body`, so the work returns instead of running on.
    static func run<Value: Sendable>(tracking tracker: WorkTracker? = nil,
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
final class WorkTracker: Sendable {
    private let inFlight = Atomic<Int>(0)

    func started() { inFlight.add(1, ordering: .sequentiallyConsistent) }
    func ended() { inFlight.subtract(1, ordering: .sequentiallyConsistent) }
    var running: Int { inFlight.load(ordering: .sequentiallyConsistent) }

    /// Waits (up to `limit`) until none of this run's work is running; returns whether it got there.
    @discardableResult
    func waitUntilIdle(limit: Duration = .seconds(120)) -> Bool {
        let deadline = ContinuousClock.now + limit
        while running > 0 {
            guard ContinuousClock.now < deadline else { return false }
            usleep(10_000)
        }
        return true
    }
}
