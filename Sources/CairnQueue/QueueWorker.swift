import CairnCore
import Foundation
import Synchronization

/// One worker of a shared queue: claims jobs in batches as its lanes free, runs them, beats for the leases it holds
/// (and takes back any worker's expired ones), and finishes them in batches. `stop()` (SIGTERM) ends the claiming;
/// jobs running then get `drainTimeout` to end, and the leases of those still running after it are given back
/// with their attempt counts unchanged.
public final class QueueWorker: Sendable {
    public struct Settings: Sendable {
        /// Jobs run at once.
        public var lanes = 2
        /// The most jobs one claim takes.
        public var batch = 16
        public var leaseTTL: Duration = .seconds(15)
        public var beatInterval: Duration = .seconds(5)
        /// How long an idle worker waits for a NOTIFY before it looks anyway (work queued while it reconnected).
        public var idlePoll: Duration = .seconds(5)
        public var drainTimeout: Duration = .seconds(30)
        /// The wait before a failed job runs again, doubled per attempt.
        public var retryDelay: Duration = .seconds(1)
        /// How long jobs that ended stay in the queue (for `cairn queue status`, and for an import resumed after
        /// its jobs finished) before a worker deletes them; checked as the worker starts and every hour.
        public var keepFinished: Duration = .seconds(7 * 24 * 3600)
        /// Whether jobs that end while a completion is being written are finished together in the next one; off,
        /// every job is finished by a statement of its own.
        public var batchesCompletions = true
        /// The library whose jobs this worker takes (nil: any library's).
        public var library: String?

        public init() {}
    }

    /// A job's work: returns its result (what waiters read), or throws (`JobFailure` says whether to retry).
    public typealias Job = @Sendable (Lease) async throws -> String

    public let id: UUID
    private let queue: PostgresWorkQueue
    private let settings: Settings
    private let job: Job
    private let onServer: @Sendable (QueueServerEvent) -> Void
    /// Whether the last call to the queue failed: an outage is told once, and its end once.
    private let outage = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let state = Locked(State())
    private let wakeup = Wakeup()

    private struct State {
        var held: [UUID: Lease] = [:]
        var lost: Set<UUID> = []
        var finishing: [(lease: Lease, result: String)] = []
        var flushing = false
        var report = QueueWorkerReport()
    }

    public init(queue: PostgresWorkQueue, settings: Settings = Settings(), id: UUID = UUID(),
                onServer: @escaping @Sendable (QueueServerEvent) -> Void = { _ in }, job: @escaping Job) {
        self.queue = queue
        self.settings = settings
        self.id = id
        self.onServer = onServer
        self.job = job
    }

    /// Ends the claiming; `run` returns once the jobs running have ended or been given back.
    public func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        wakeup.signal()
    }
    private var isStopped: Bool { stopped.load(ordering: .sequentiallyConsistent) }

    /// Works until stopped; returns what it did.
    public func run(host: String = ProcessInfo.processInfo.hostName, pid: Int = Int(getpid())) async throws -> QueueWorkerReport {
        try await retrying { try await self.queue.register(worker: self.id, host: host, pid: pid) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.beat() }
            group.addTask { await self.queue.keepListening(on: PostgresWorkQueue.channel) { self.wakeup.signal() } }
            await self.work()
            group.cancelAll()
        }
        await flush()
        try? await queue.unregister(worker: id)
        return state.withLock { $0.report }
    }

    private enum Event { case jobEnded, claimed(leases: [Lease], asked: Int), woken, drainEnded }

    private func work() async {
        await withTaskGroup(of: Event.self) { group in
            var running = 0
            /// Lanes kept for the claims on their way.
            var claiming = 0
            /// A claim came back short: the next waits for a reason to look again (a NOTIFY, the poll, a job's end).
            var dry = false
            var waiting = false
            while !isStopped {
                // A claim waits for half a batch of free lanes (or an idle worker): a claim per freed lane would make
                // every batch a batch of one. Claims go out while others are on their way: claims of one job
                // (unbatched), one at a time, would each wait for the last one's commit to reach the disk.
                let free = settings.lanes - running - claiming
                let batchFree = free >= max(1, min(settings.batch, settings.lanes) / 2)
                if !dry && free > 0 && (running + claiming == 0 || batchFree) {
                    for size in stride(from: 0, to: free, by: settings.batch).map({ min(settings.batch, free - $0) }) {
                        claiming += size
                        group.addTask { .claimed(leases: await self.claim(size), asked: size) }
                    }
                }
                // One waiter at all times, even with every lane busy: it is what sees a stop.
                if !waiting {
                    waiting = true
                    group.addTask { await self.waitForWork(); return .woken }
                }
                switch await group.next() {
                case .jobEnded:
                    running -= 1
                    dry = false
                case .claimed(let leases, let asked):
                    claiming -= asked
                    dry = leases.count < asked
                    for lease in leases {
                        state.withLock { $0.held[lease.token] = lease }
                        running += 1
                        group.addTask { await self.execute(lease); return .jobEnded }
                    }
                case .woken, .drainEnded:
                    waiting = false
                    dry = false
                case nil: break
                }
            }
            // Stopped: the jobs running get the drain timeout, then their leases go back, as do those of claims
            // that come back meanwhile.
            group.addTask { try? await Task.sleep(for: self.settings.drainTimeout); return .drainEnded }
            drain: while running > 0 || claiming > 0, let event = await group.next() {
                switch event {
                case .jobEnded: running -= 1
                case .claimed(let leases, let asked):
                    claiming -= asked
                    let released = (try? await queue.release(leases)) ?? []
                    state.withLock { $0.report.released += released.count }
                case .woken: continue
                case .drainEnded: break drain
                }
            }
            if running > 0 {
                let unfinished = state.withLock { state in
                    defer { state.held = [:] }
                    return Array(state.held.values)
                }
                let released = (try? await queue.release(unfinished)) ?? []
                state.withLock { $0.report.released += released.count }
            }
            // What is left (jobs given back, the drain's timer, a waiter) ends now.
            group.cancelAll()
        }
    }

    /// One claim of up to `limit` jobs; none when the server cannot be reached and the worker is stopping.
    private func claim(_ limit: Int) async -> [Lease] {
        (try? await retrying {
            try await self.queue.claim(worker: self.id, library: self.settings.library, limit: limit, ttl: self.settings.leaseTTL)
        }) ?? []
    }

    private func execute(_ lease: Lease) async {
        do {
            let result = try await job(lease)
            guard settings.batchesCompletions else {
                let finished = (try? await retrying { try await self.queue.complete([(lease, result)]) }) ?? []
                state.withLock { state in
                    if finished.isEmpty { state.report.lost += 1 } else { state.report.completed += 1 }
                    state.held.removeValue(forKey: lease.token)
                }
                return
            }
            state.withLock { $0.finishing.append((lease, result)) }
            await flush()
        } catch {
            // Given back at a stop: nothing to record.
            let (released, lost) = state.withLock { ($0.held[lease.token] == nil, $0.lost.contains(lease.token)) }
            if released { return }
            if !lost {
                let delay = settings.retryDelay * (1 << min(lease.attempt - 1, 10))
                let final = (error as? JobFailure).map { !$0.isRetryable } ?? false
                let category = (error as? JobFailure)?.category ?? FailureReason(error).category
                let recorded = (try? await retrying {
                    try await self.queue.fail(lease, reason: String(describing: error), category: category,
                                              retryAfter: delay, final: final)
                }) ?? false
                state.withLock { recorded ? ($0.report.failed += 1) : ($0.report.lost += 1) }
            } else {
                state.withLock { $0.report.lost += 1 }
            }
            state.withLock { _ = $0.held.removeValue(forKey: lease.token) }
        }
    }

    /// Finishes the jobs that ended, in one statement for all that ended meanwhile; a job whose lease was lost
    /// finishes nothing (counted lost).
    private func flush() async {
        guard state.withLock({ state in
            if state.flushing || state.finishing.isEmpty { return false }
            state.flushing = true
            return true
        }) else { return }
        while let batch = state.withLock({ state -> [(lease: Lease, result: String)]? in
            guard !state.finishing.isEmpty else { state.flushing = false; return nil }
            defer { state.finishing = [] }
            return state.finishing
        }) {
            let finished = (try? await retrying { try await self.queue.complete(batch) }) ?? []
            state.withLock { state in
                state.report.completed += finished.count
                state.report.lost += batch.count - finished.count
                for (lease, _) in batch { state.held.removeValue(forKey: lease.token) }
            }
        }
    }

    /// Every beat: pushes back this worker's leases (noting those lost). Twice a beat: takes back any worker's
    /// expired leases, and claims at once when it took some, so a dead worker's jobs wait at most its leases' TTL
    /// and half a beat.
    private func beat() async {
        var tick = 0
        var nextPrune = ContinuousClock.now
        while !Task.isCancelled {
            let next = ContinuousClock.now + settings.beatInterval / 2
            if ContinuousClock.now >= nextPrune {
                // A failure (the server away) tries again at the next beat; success waits an hour.
                if (try? await queue.pruneFinished(keptFor: settings.keepFinished)) != nil {
                    nextPrune = ContinuousClock.now + .seconds(3600)
                }
            }
            if tick % 2 == 0 {
                let held = state.withLock { Array($0.held.values) }
                if let kept = try? await queue.heartbeat(worker: id, leases: held, ttl: settings.leaseTTL) {
                    state.withLock { state in
                        // Only leases still running count (one finished since the snapshot is not lost), and only
                        // those are kept: a long-running worker's set stays as small as its lanes.
                        for lease in held where !kept.contains(lease.token) { state.lost.insert(lease.token) }
                        state.lost = state.lost.filter { state.held[$0] != nil }
                    }
                }
            }
            if let rescued = try? await queue.rescueExpired(), rescued > 0 { wakeup.signal() }
            tick += 1
            try? await Task.sleep(until: next)
        }
    }

    /// Returns when a NOTIFY arrives (or arrived since the last wait), the idle poll passes, or the worker is stopped.
    private func waitForWork() async {
        await wakeup.wait(atMost: settings.idlePoll)
    }

    /// Runs `operation`, again after a growing pause (0.1 s doubling to 5 s) while the server cannot be reached,
    /// until it succeeds or the worker is stopped; tells `onServer` when an outage starts and when it ends.
    private func retrying<Value: Sendable>(_ operation: @Sendable () async throws -> Value) async throws -> Value {
        var pause = Duration.milliseconds(100)
        while true {
            do {
                let value = try await operation()
                if outage.exchange(false, ordering: .sequentiallyConsistent) { onServer(.back) }
                return value
            } catch {
                if isStopped || Task.isCancelled { throw error }
                if !outage.exchange(true, ordering: .sequentiallyConsistent) {
                    onServer(.lost(reason: WorkQueueError.describe(error)))
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }
}
