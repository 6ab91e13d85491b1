import Foundation

/// Runs `body` (and the child tasks it starts) on a thread of its own rather than the cooperative pool.
///
/// For a test with a time limit in a process whose other tests block cooperative threads while a child process runs
/// (the command-line tests): on two cores those can hold the whole pool for minutes, and a test that suspends
/// often would then exceed its limit without anything being wrong. The limit is there to catch a hang of the code
/// under test, so the test's own tasks get a thread nobody else blocks.
public func onOwnThread<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
    try await onOwnThread { _ in try await body() }
}

/// As `onOwnThread`, handing `body` the thread's executor for the unstructured tasks it starts
/// (`Task(executorPreference:)`): those are not children, and would otherwise run on the cooperative pool.
public func onOwnThread<T: Sendable>(_ body: @Sendable (any TaskExecutor) async throws -> T) async throws -> T {
    let executor = OwnThreadExecutor()
    defer { executor.stop() }
    return try await withTaskExecutorPreference(executor) { try await body(executor) }
}

/// A task executor with one thread, which runs the jobs it is given in order until stopped.
final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    // `NSCondition` (a pthread mutex and condition variable) so that ThreadSanitizer sees the hand-over.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init() {
        let thread = Thread { [self] in self.serve() }
        thread.name = "cairn-test-own-thread"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        condition.lock()
        if stopped {
            // A job of an unstructured task that outlived `body`: the pool runs it.
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        jobs.append(UnownedJob(job))
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs queued so far have run; later jobs go to the pool.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty, !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
