import CairnCore

/// How many phases of a lane run their stage work at once: its width, plus runners only small items take
/// (`LaneSettings.smallItemRunners`). Phases the core started beyond that (`LaneSettings.ahead`), their in-flight
/// marks committed, wait here for a runner, first come first served among those a freed runner may take.
final class LaneRunners: Sendable {
    private struct Runners: Sendable {
        var free: Int
        var smallFree: Int
    }

    /// A request says whether the item may take a small items' runner; a grant, whether it took one.
    private let queue: AdmissionQueue<Runners, Bool, Bool>

    init(count: Int, smallItemRunners: Int = 0) {
        queue = AdmissionQueue(Runners(free: max(1, count), smallFree: max(0, smallItemRunners)),
                               order: .firstThatFits) { runners, small in
            if runners.free > 0 {
                runners.free -= 1
                return false
            }
            if small && runners.smallFree > 0 {
                runners.smallFree -= 1
                return true
            }
            return nil
        }
    }

    /// Returns with a runner the caller must `release` (saying which kind it got: the returned value, true for a
    /// small items' runner); throws `CancellationError` if the task is cancelled before one is free (it then holds
    /// none). `small`: the item may take a small items' runner.
    @discardableResult
    func acquire(small: Bool = false) async throws -> Bool {
        try await queue.acquire(small)
    }

    /// Gives a runner back (`smallRunner`: one of the small items' own), to the longest waiting phase that may take
    /// it, if there is one.
    func release(smallRunner: Bool = false) {
        queue.update { runners in
            if smallRunner { runners.smallFree += 1 } else { runners.free += 1 }
        }
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
