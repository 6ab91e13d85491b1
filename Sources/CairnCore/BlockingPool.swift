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
