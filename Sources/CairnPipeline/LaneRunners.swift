import CairnCore

/// How many phases of a lane run their stage work at once: its width, plus runners only small items take
/// (`LaneSettings.smallItemRunners`). Phases the core started beyond that (`LaneSettings.ahead`), their in-flight
/// marks committed, wait here for a runner, first come first served among those a freed runner may take.
final class LaneRunners: Sendable {
    private struct Waiter {
        var ticket: UInt64
        var small: Bool
        /// Resumed with whether the runner it gets is one of the small items' own.
        var continuation: CheckedContinuation<Bool, any Error>
    }

    private struct State {
        var free: Int
        var smallFree: Int
        var waiting: [Waiter] = []
        var nextTicket: UInt64 = 0
    }

    private let state: Locked<State>

    init(count: Int, smallItemRunners: Int = 0) {
        state = Locked(State(free: max(1, count), smallFree: max(0, smallItemRunners)))
    }

    /// Returns with a runner the caller must `release` (saying which kind it got: the returned value, true for a
    /// small items' runner); throws `CancellationError` if the task is cancelled before one is free (it then holds
    /// none). `small`: the item may take a small items' runner.
    @discardableResult
    func acquire(small: Bool = false) async throws -> Bool {
        let ticket = state.withLock { state in
            state.nextTicket += 1
            return state.nextTicket
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                enum Decision { case run(smallRunner: Bool), cancelled, wait }
                // Cancellation is checked under the lock: a handler that ran before the wait was queued found
                // nothing to remove, so the wait must not be queued at all.
                let decision: Decision = state.withLock { state in
                    if Task.isCancelled { return .cancelled }
                    if state.free > 0 {
                        state.free -= 1
                        return .run(smallRunner: false)
                    }
                    if small && state.smallFree > 0 {
                        state.smallFree -= 1
                        return .run(smallRunner: true)
                    }
                    state.waiting.append(Waiter(ticket: ticket, small: small, continuation: continuation))
                    return .wait
                }
                switch decision {
                case .run(let smallRunner): continuation.resume(returning: smallRunner)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Bool, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.ticket == ticket }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Gives a runner back (`smallRunner`: one of the small items' own), to the longest waiting phase that may take
    /// it, if there is one.
    func release(smallRunner: Bool = false) {
        let next = state.withLock { state -> CheckedContinuation<Bool, any Error>? in
            guard let index = state.waiting.firstIndex(where: { !smallRunner || $0.small }) else {
                if smallRunner { state.smallFree += 1 } else { state.free += 1 }
                return nil
            }
            return state.waiting.remove(at: index).continuation
        }
        next?.resume(returning: smallRunner)
    }
}

/// One phase's hold on a runner of its lane, and on one of the decoders the decoding lanes share when they are
/// bounded together: taken in that order, given back once, when its work returns, or when the grace after its
/// timeout runs out with the work still hung (the core then frees its slot, and a hung runner must not stall the
/// lane).
final class RunnerLease: Sendable {
    /// Taken in this order; a phase never waits for one while a holder of a later one waits for it.
    private let pools: [LaneRunners]
    private let small: Bool
    /// The runners held, by pool, with whether each is a small items' own; `released` once given back.
    private let state = Locked((held: [(pool: Int, smallRunner: Bool)](), released: false))

    /// `small`: the phase's item may take the small items' runners.
    init(_ pools: [LaneRunners], small: Bool = false) {
        self.pools = pools
        self.small = small
    }

    /// Waits for a runner of each pool; throws `CancellationError` if the task is cancelled first, holding none.
    func acquire() async throws {
        for (index, pool) in pools.enumerated() {
            let smallRunner: Bool
            do { smallRunner = try await pool.acquire(small: small) } catch {
                release()
                throw error
            }
            let releasedMeanwhile = state.withLock { state in
                if state.released { return true }
                state.held.append((index, smallRunner))
                return false
            }
            if releasedMeanwhile {
                pool.release(smallRunner: smallRunner)
                return
            }
        }
    }

    func release() {
        let held = state.withLock { state in
            defer { state = (held: [], released: true) }
            return state.held
        }
        for runner in held.reversed() { pools[runner.pool].release(smallRunner: runner.smallRunner) }
    }
}
