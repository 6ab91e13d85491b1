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

    /// Runs `body` on the pool and returns its result. Plain work runs to its end even when the awaiting task is
    /// cancelled (it persists what a stopping run must keep); work that can stop early takes an `Interrupt`.
    public static func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try body() }) }
        }
    }

    /// As `run`, for work that checks `Interrupt` as it goes: cancelling the awaiting task sets it.
    public static func run<Value: Sendable>(interruptible body: @escaping @Sendable (Interrupt) throws -> Value)
        async throws -> Value {
        let interrupt = Interrupt()
        return try await withTaskCancellationHandler {
            try await run { try body(interrupt) }
        } onCancel: {
            interrupt.interrupt()
        }
    }

    /// Runs `body` on a pool thread, for synchronous callers that wait for it themselves (`parallelMap`).
    public static func submit(_ body: @escaping @Sendable () -> Void) {
        // The pool is never shut down, so a work item always runs (`state` is `.active`).
        shared.submit { _ in body() }
    }
}

/// Asks blocking work to stop early: set once, by a cancelled task or a stopping run, and read by loops that can
/// stop between steps (the hashing's reads, the walk's folders, FFmpeg's interrupt callback).
public final class Interrupt: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    public func interrupt() { flag.store(true, ordering: .relaxed) }
    public var isInterrupted: Bool { flag.load(ordering: .relaxed) }
}
