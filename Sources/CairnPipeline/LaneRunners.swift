import CairnCore

/// How many phases of a lane run their stage work at once (its width). Phases the core started beyond that
/// (`LaneSettings.ahead`), their in-flight marks committed, wait here for a runner, first come first served.
final class LaneRunners: Sendable {
    private struct State {
        var free: Int
        var waiting: [(ticket: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextTicket: UInt64 = 0
    }

    private let state: Locked<State>

    init(count: Int) { state = Locked(State(free: max(1, count))) }

    /// Returns with a runner the caller must `release`; throws `CancellationError` if the task is cancelled
    /// before one is free (it then holds none).
    func acquire() async throws {
        let ticket = state.withLock { state in
            state.nextTicket += 1
            return state.nextTicket
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Decision { case run, cancelled, wait }
                // Cancellation is checked under the lock: a handler that ran before the wait was queued found
                // nothing to remove, so the wait must not be queued at all.
                let decision: Decision = state.withLock { state in
                    if Task.isCancelled { return .cancelled }
                    if state.free > 0 {
                        state.free -= 1
                        return .run
                    }
                    state.waiting.append((ticket, continuation))
                    return .wait
                }
                switch decision {
                case .run: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.ticket == ticket }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Gives a runner back, to the longest waiting phase if there is one.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}

/// One phase's hold on a runner, given back once: when its work returns, or when the grace after its timeout runs
/// out with the work still hung (the core then frees its slot, and a hung runner must not stall the lane).
final class RunnerLease: Sendable {
    private let runners: LaneRunners
    private let state = Locked((held: false, released: false))

    init(_ runners: LaneRunners) { self.runners = runners }

    /// Waits for a runner; throws `CancellationError` if the task is cancelled first.
    func acquire() async throws {
        try await runners.acquire()
        let releasedMeanwhile = state.withLock { state in
            if state.released { return true }
            state.held = true
            return false
        }
        if releasedMeanwhile { runners.release() }
    }

    func release() {
        let held = state.withLock { state in
            defer { state = (held: false, released: true) }
            return state.held
        }
        if held { runners.release() }
    }
}
