import NIOPosix
import Synchronization

/// The process's one pool of threads for blocking work (file I/O, hashing, SQLite, decoding), swift-nio's
/// `NIOThreadPool`, so slow system calls never run on Swift's cooperative threads and no module starts threads of
/// its own. Sized from the machine: more threads than cores, since much of the work waits on the disk; the lanes'
/// widths and the hashing's worker count bound how much of it runs at once.
public enum BlockingPool {
    /// Four threads a core, at least 16 (cold small-file hashing keeps up to 16 reads in flight), at most 64.
    public static let threadCount = min(64, max(16, System.coreCount * 4))

    private static let shared: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threadCount)
        pool.start()
        return pool
    }()

    /// Runs `body` on the pool and returns its result. It runs to its end even when the awaiting task is cancelled
    /// (it may persist what a stopping run must keep); work that can stop early checks an `Interrupt`.
    public static func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try body() }) }
        }
    }

    /// As `run`, for work a run may give up on: once the task's `Abandonment` is abandoned, the caller stops
    /// waiting (throwing `CancellationError`) while `body` runs on to its end on its thread, its result dropped.
    /// Without an `Abandonment`, as `run`.
    public static func runAbandonable<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        guard let abandonment = Abandonment.current else { return try await run(body) }
        return try await withCheckedThrowingContinuation { continuation in
            // Whichever of the abandonment and the work's end takes the registration back resumes the caller.
            let registration = abandonment.register(continuation)
            submit {
                let result = Result { try body() }
                if abandonment.unregister(registration) { continuation.resume(with: result) }
            }
        }
    }

    /// Runs `body` on a pool thread, for synchronous callers that wait for it themselves (`parallelMap`).
    public static func submit(_ body: @escaping @Sendable () -> Void) {
        // The pool is never shut down, so a work item always runs (`state` is `.active`).
        shared.submit { _ in body() }
    }
}

/// Asks blocking work to stop early: set once, by a stopping run, and read by loops that can stop between steps
/// (the hashing's files and reads).
public final class Interrupt: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    public func interrupt() { flag.store(true, ordering: .relaxed) }
    public var isInterrupted: Bool { flag.load(ordering: .relaxed) }
}

/// Lets a run stop waiting for blocking work it has given up on (a phase past its timeout and its grace), so the
/// run's tree of tasks can end while that work runs on to its end on the pool. Set as a task-local around the work.
public final class Abandonment: Sendable {
    @TaskLocal public static var current: Abandonment?

    private struct State {
        var abandoned = false
        var next = 0
        var waiters: [Int: any AbandonableWait] = [:]
    }

    private let state = Locked(State())

    public init() {}

    /// Every wait registered now or later ends at once.
    public func abandon() {
        let waiters = state.withLock { state in
            state.abandoned = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
    }

    /// Registers a caller waiting for work: it is resumed with `CancellationError` when the run abandons its work
    /// (at once if it already has), unless the work ends first and takes the registration back (`unregister`).
    fileprivate func register(_ waiter: some AbandonableWait) -> Int {
        let (registration, abandoned) = state.withLock { state in
            state.next += 1
            if !state.abandoned { state.waiters[state.next] = waiter }
            return (state.next, state.abandoned)
        }
        if abandoned { waiter.resume(throwing: CancellationError()) }
        return registration
    }

    /// Takes `registration` back; false if the abandonment took it first (and resumed its caller).
    fileprivate func unregister(_ registration: Int) -> Bool {
        state.withLock { $0.waiters.removeValue(forKey: registration) != nil }
    }
}

/// A caller waiting for abandonable work (a continuation: one reference, so held in an existential without an
/// allocation of its own).
protocol AbandonableWait: Sendable {
    func resume(throwing error: any Error)
}

extension CheckedContinuation: AbandonableWait where E == any Error {}

// MARK: Waits between pool threads
//
// Pool threads that hand work to each other (the walk and its listings ahead, a copy and its writer, the walk and
// the run-table inserts) wait through these, and only these, so every blocking wait outside the pool is here. Each
// user waits only for work that never waits in turn, or that it can do itself (see `CopyPipeline`): a full pool
// then delays such work but cannot deadlock it.

extension BlockingPool {
    /// A counting semaphore: `wait` takes a unit (blocking while there is none), `signal` gives one back. Unlike
    /// Dispatch's, it may end with fewer units than it started with (a copy whose reader wrote on its own).
    public final class Semaphore: Sendable {
        private let units: Locked<Int>

        public init(value: Int) { units = Locked(value) }

        public func wait() { units.withLock(when: { $0 > 0 }) { $0 -= 1 } }

        /// Takes a unit if one is there now.
        public func tryWait() -> Bool {
            units.withLock { units in
                guard units > 0 else { return false }
                units -= 1
                return true
            }
        }

        public func signal() { units.withLockNotifying { $0 += 1 } }
    }

    /// Work started on the pool now whose result a thread waits for later (a folder listed ahead of the walk).
    public final class Pending<Value: Sendable>: Sendable {
        private enum State { case running, done(Value), taken }

        private let state = Locked(State.running)

        public init(_ work: @escaping @Sendable () -> Value) {
            BlockingPool.submit { [state] in
                let value = work()
                state.withLockNotifying { $0 = .done(value) }
            }
        }

        /// The result, handed over once (a second call gets nil): the waiter keeps it, not this.
        public func wait() -> Value? {
            state.withLock(when: { if case .running = $0 { false } else { true } }) { state in
                defer { state = .taken }
                if case .done(let value) = state { return value }
                return nil
            }
        }
    }
}
