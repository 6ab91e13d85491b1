import Foundation

/// A wakeup that is never lost: a signal with no one waiting is kept for the next wait. The queue's waits on new
/// work, and the pipeline's stop of a child task or of a timed sleep.
package final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())

    package init() {}

    package func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else { state.pending = true; return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at a signal (one kept since the last wait included), or when the task is cancelled.
    package func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled { state.pending = false; return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            signal()
        }
    }

    /// Returns at a signal, after `limit`, or when the task is cancelled, whichever comes first.
    package func wait(atMost limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait() }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }
}
