import CairnCore

/// Runs `body` until it returns or `signal` is signalled, whichever is first; a signal cancels `body` (its task
/// sees `Task.isCancelled`) and waits for it to return. Children of a task group have no handle of their own: this
/// is what `Task.cancel()` is for an unstructured task.
func withStop(_ signal: Wakeup, _ body: @escaping @Sendable () async -> Void) async {
    await withTaskGroup(of: Void.self) { group in
        group.addTask { await body() }
        group.addTask { await signal.wait() }
        await group.next()
        group.cancelAll()
    }
}

/// A handle on one child of the run's task group, which has none of its own: `stop()` cancels that child's job
/// (now, or as it starts) by the child's own `withStop`, so the cancellation stays inside the task tree.
final class ChildTask: Sendable {
    private let signal = Wakeup()

    func stop() { signal.signal() }

    /// Runs `job` as the whole of the calling child task, until it returns or `stop()` ends it.
    fileprivate func run(_ job: @escaping @Sendable () async -> Void) async { await withStop(signal, job) }
}

/// The scheduler's way into its run's task group: work that its actions start (phases, timers, page requests) is
/// queued here and added to the group by `run`, so the run is one tree of tasks that ends only when all of it has.
struct ChildTasks: Sendable {
    typealias Job = @Sendable () async -> Void

    let jobs: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    init() { (jobs, continuation) = AsyncStream.makeStream(of: Job.self) }

    /// Starts `job` as a child of the run; the handle returned stops it alone.
    @discardableResult
    func spawn(_ job: @escaping Job) -> ChildTask {
        let child = ChildTask()
        continuation.yield { await child.run(job) }
        return child
    }

    /// No more children: `jobs` ends once the ones queued are taken.
    func finish() { continuation.finish() }
}
