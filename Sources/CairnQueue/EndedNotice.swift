import CairnCore
import Synchronization

/// The queue's "ended" NOTIFY, sent in a statement of its own at most once per `interval` for every job that ended
/// meanwhile. Not in the completion's transaction: PostgreSQL serializes the commits of all transactions that
/// notify (a cluster-wide lock held until the commit is on disk), so completions that notified reached the disk
/// one flush at a time. Waiters lose nothing by the delay: they read outcomes at each NOTIFY and poll besides.
final class EndedNotice: Sendable {
    let interval: Duration
    private let pending = Atomic<Bool>(false)
    private let wakeup = Wakeup()

    init(interval: Duration) {
        self.interval = interval
    }

    /// Jobs ended: a NOTIFY goes out within `interval`.
    func jobsEnded() {
        pending.store(true, ordering: .sequentiallyConsistent)
        wakeup.signal()
    }

    /// Sends the NOTIFYs until the task is cancelled.
    func run(send: @Sendable () async -> Void) async {
        while !Task.isCancelled {
            await wakeup.wait()
            guard pending.exchange(false, ordering: .sequentiallyConsistent) else { continue }
            await send()
            try? await Task.sleep(for: interval)
        }
    }

    /// Sends the NOTIFY still owed, if one is (the queue closing).
    func flush(send: @Sendable () async -> Void) async {
        if pending.exchange(false, ordering: .sequentiallyConsistent) { await send() }
    }
}
