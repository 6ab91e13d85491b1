import CairnCore
@testable import CairnQueue
import CairnTesting
import Foundation
import PostgresNIO
import Synchronization
import Testing

/// Workers in one process over the real queue: sharing, rescue, heartbeats and the stop's drain.
@Suite struct QueueWorkerTests {
    let location: PostgresLocation

    init() throws {
        location = PostgresLocation(endpoint: .socket(folder: try TestPostgres.socketFolder(), port: 5432),
                                    database: try TestPostgres.freshDatabase())
    }

    /// Who ran which job under which token.
    final class ExecutionLog: Sendable {
        let entries = Locked<[(job: Int64, token: UUID, worker: Int)]>([])
        func record(_ lease: Lease, by worker: Int) { entries.withLock { $0.append((lease.job, lease.token, worker)) } }
        var jobsRun: [Int64] { entries.withLock { $0.map(\.job) } }
        func runs(by worker: Int) -> Int { entries.withLock { $0.filter { $0.worker == worker }.count } }
    }

    static func settings(lanes: Int, ttl: Duration = .seconds(15), beat: Duration = .seconds(5)) -> QueueWorker.Settings {
        var settings = QueueWorker.Settings()
        settings.lanes = lanes
        settings.leaseTTL = ttl
        settings.beatInterval = beat
        settings.idlePoll = .milliseconds(200)
        settings.drainTimeout = .milliseconds(300)
        return settings
    }

    /// Waits (up to `limit`, generous: a bound on a wait, not a measure of speed, and the whole suite shares the
    /// cores) until `condition` holds for the queue's status.
    static func waitUntil(_ queue: PostgresWorkQueue, limit: Duration = .seconds(60),
                          _ condition: (QueueStatus) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if condition(try await queue.status()) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test func threeWorkersRunEveryJobOnceAndFinishItInBatches() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(PostgresWorkQueueTests.work(60))
            let log = ExecutionLog()
            let workers = (0..<3).map { index in
                QueueWorker(queue: queue, settings: Self.settings(lanes: 2)) { lease in
                    log.record(lease, by: index)
                    try await Task.sleep(for: .milliseconds(5))
                    return ""
                }
            }
            let runs = workers.map { worker in Task { try await worker.run() } }
            #expect(try await Self.waitUntil(queue) { $0.done == 60 })
            workers.forEach { $0.stop() }
            var reports: [QueueWorkerReport] = []
            for run in runs { reports.append(try await run.value) }
            #expect(reports.map(\.completed).reduce(0, +) == 60)
            #expect(reports.allSatisfy { $0.lost == 0 && $0.failed == 0 && $0.released == 0 })
            #expect(log.jobsRun.count == 60 && Set(log.jobsRun).count == 60)
        }
    }

    @Test func aWorkerThatStopsBeatingLosesItsLeasesToAnotherAndCannotFinishThem() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(PostgresWorkQueueTests.work(8))
            let log = ExecutionLog()
            let hold = Atomic<Bool>(true)
            // Alive but silent: it beats once at its start, then not for an hour.
            let silent = QueueWorker(queue: queue, settings: Self.settings(lanes: 8, ttl: .seconds(1), beat: .seconds(3600))) { lease in
                log.record(lease, by: 0)
                while hold.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(20)) }
                return ""
            }
            let silentRun = Task { try await silent.run() }
            #expect(try await Self.waitUntil(queue) { $0.running == 8 })

            let rescuer = QueueWorker(queue: queue, settings: Self.settings(lanes: 8, ttl: .seconds(15), beat: .milliseconds(200))) { lease in
                log.record(lease, by: 1)
                return ""
            }
            let rescuerRun = Task { try await rescuer.run() }
            #expect(try await Self.waitUntil(queue) { $0.done == 8 })
            #expect(log.runs(by: 1) == 8)

            // The silent worker's jobs end now: their completions find other tokens and finish nothing.
            hold.store(false, ordering: .sequentiallyConsistent)
            silent.stop()
            rescuer.stop()
            let silentReport = try await silentRun.value
            #expect(silentReport.completed == 0 && silentReport.lost == 8)
            #expect(try await rescuerRun.value.completed == 8)
            let status = try await queue.status()
            #expect(status.done == 8 && status.running == 0 && status.waiting == 0)
        }
    }

    @Test func aWorkerDeletesJobsPastTheirKeepingTimeAsItStarts() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            let jobs = try await queue.enqueue(PostgresWorkQueueTests.work(2))
            let leases = try await queue.claim(worker: UUID(), limit: 2, ttl: .seconds(15))
            #expect(try await queue.complete(leases).count == 2)
            try await queue.client.query("UPDATE cairn_job SET finished_at = now() - interval '2 hours' WHERE id = \(jobs[0])")
            var settings = Self.settings(lanes: 1)
            settings.keepFinished = .seconds(3600)
            let worker = QueueWorker(queue: queue, settings: settings) { _ in "" }
            let running = Task { try await worker.run() }
            #expect(try await Self.waitUntil(queue) { $0.done == 1 })
            worker.stop()
            _ = try await running.value
            #expect(try await queue.outcomes(of: jobs).keys.sorted() == [jobs[1]])
        }
    }

    @Test func aLongJobOnABeatingWorkerIsNeverRescued() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(PostgresWorkQueueTests.work(1))
            let log = ExecutionLog()
            // The job runs twice its lease's TTL; the beats keep the lease. A TTL of fifty beats leaves room for a
            // loaded machine's late beats (at five beats, one CI run under the full suite lost the lease).
            let busy = QueueWorker(queue: queue, settings: Self.settings(lanes: 1, ttl: .seconds(5), beat: .milliseconds(100))) { lease in
                log.record(lease, by: 0)
                try await Task.sleep(for: .seconds(10))
                return ""
            }
            let busyRun = Task { try await busy.run() }
            #expect(try await Self.waitUntil(queue) { $0.running == 1 })
            let other = QueueWorker(queue: queue, settings: Self.settings(lanes: 4, ttl: .seconds(1), beat: .milliseconds(100))) { lease in
                log.record(lease, by: 1)
                return ""
            }
            let otherRun = Task { try await other.run() }
            #expect(try await Self.waitUntil(queue) { $0.done == 1 })
            busy.stop()
            other.stop()
            #expect(try await busyRun.value.completed == 1)
            _ = try await otherRun.value
            #expect(log.jobsRun.count == 1)
        }
    }

    @Test func aStopGivesBackTheJobsStillRunningAfterTheDrainWithTheirAttemptsUnchanged() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(PostgresWorkQueueTests.work(3))
            let worker = QueueWorker(queue: queue, settings: Self.settings(lanes: 2)) { lease in
                if lease.work.checksum.hasSuffix("0") { return "" }  // one quick job
                try await Task.sleep(for: .seconds(3600))
                return ""
            }
            let run = Task { try await worker.run() }
            #expect(try await Self.waitUntil(queue) { $0.done == 1 && $0.running == 2 })
            worker.stop()
            let report = try await run.value
            #expect(report.completed == 1 && report.released == 2 && report.lost == 0)
            let again = try await queue.claim(worker: UUID(), limit: 5, ttl: .seconds(15))
            #expect(again.count == 2 && again.allSatisfy { $0.attempt == 1 })
        }
    }

    /// Claims of one (unbatched) go out together as lanes free: every lane fills; and a stop while claims are on
    /// their way leaves no job running, those claimed too late given back with their attempts unchanged.
    @Test func claimsOfOneFillEveryLaneAndAStopLeavesNoJobRunning() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(PostgresWorkQueueTests.work(300))
            var settings = Self.settings(lanes: 12)
            settings.batch = 1
            settings.batchesCompletions = false
            let running = Atomic<Int>(0)
            let most = Atomic<Int>(0)
            // Each job holds its lane until all twelve have run at once (or a minute has passed, and the test
            // fails): on a loaded machine, jobs that end on their own may never overlap that much.
            let deadline = ContinuousClock.now + .seconds(60)
            let worker = QueueWorker(queue: queue, settings: settings) { _ in
                let now = running.add(1, ordering: .sequentiallyConsistent).newValue
                most.max(now, ordering: .sequentiallyConsistent)
                while most.load(ordering: .sequentiallyConsistent) < 12 && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                running.subtract(1, ordering: .sequentiallyConsistent)
                return ""
            }
            let run = Task { try await worker.run() }
            #expect(try await Self.waitUntil(queue) { $0.done >= 60 })
            worker.stop()
            let report = try await run.value
            #expect(most.load(ordering: .sequentiallyConsistent) == 12)
            let status = try await queue.status()
            #expect(status.running == 0)
            #expect(status.done == report.completed && status.done + status.waiting == 300)
            let again = try await queue.claim(worker: UUID(), limit: 300, ttl: .seconds(15))
            #expect(again.count == status.waiting && again.allSatisfy { $0.attempt == 1 })
        }
    }

    @Test func anIdleWorkerIsWokenByTheNotifyOfAnEnqueueNotByItsPoll() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            var settings = Self.settings(lanes: 1)
            settings.idlePoll = .seconds(3600)
            let worker = QueueWorker(queue: queue, settings: settings) { _ in "" }
            let run = Task { try await worker.run() }
            // Once its listener is in place, the worker has claimed (nothing) and waits.
            let database = location.database
            let listening = {
                (try? TestPostgres.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND query ILIKE 'LISTEN%'")) == "1"
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while !listening() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect(listening())
            try await Task.sleep(for: .milliseconds(200))
            try await queue.enqueue(PostgresWorkQueueTests.work(3))
            #expect(try await Self.waitUntil(queue) { $0.done == 3 })
            worker.stop()
            #expect(try await run.value.completed == 3)
        }
    }

    /// A server that refuses the worker's database for a while: the worker says so once, however many tries fail,
    /// says once that it answers again, and then runs what was queued meanwhile. (On a loaded machine a call may also
    /// run past its limit on its own: that is an outage of its own, told and ended the same way.)
    @Test func aWorkerTellsAnOutageOnceAndItsEndOnceThenWorksOn() async throws {
        let database = location.database
        // Short calls: a claim that waits for a connection the pool cannot make fails at its limit.
        try await PostgresWorkQueue.withQueue(at: location, callTimeLimit: .seconds(2)) { queue in
            let events = AsyncStream<QueueServerEvent>.makeStream()
            let told = Locked<[QueueServerEvent]>([])
            let worker = QueueWorker(queue: queue, settings: Self.settings(lanes: 1), onServer: { event in
                told.withLock { $0.append(event) }
                events.continuation.yield(event)
            }) { _ in "" }
            let run = Task { try await worker.run() }
            // Should the worker never tell, the stream ends after a minute and the test fails instead of hanging.
            let guardian = Task {
                try await Task.sleep(for: .seconds(60))
                events.continuation.finish()
            }
            defer { guardian.cancel() }
            var heard = events.stream.makeAsyncIterator()
            _ = try TestPostgres.psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
            _ = try TestPostgres.psql("""
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(database)'
                """)
            guard case .lost(let reason)? = await heard.next() else {
                Issue.record("the outage was not told")
                worker.stop()
                return
            }
            #expect(!reason.isEmpty)
            // Let more tries fail (each waits out its 2 s limit) before the server lets the worker back in.
            try await Task.sleep(for: .seconds(5))
            _ = try TestPostgres.psql("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
            #expect(await heard.next() == .back)
            // The test's own calls go through a handle with the usual limits: on a loaded machine a call may pass
            // the worker's 2 s, and the test is about the worker's telling, not the speed of an enqueue.
            try await PostgresWorkQueue.withQueue(at: location) { patient in
                try await patient.enqueue(PostgresWorkQueueTests.work(2))
                #expect(try await Self.waitUntil(patient) { $0.done == 2 })
            }
            worker.stop()
            _ = try await run.value
            // Never told twice in a row: each outage once, each end once.
            let all = told.withLock { $0 }
            #expect(all.count >= 2 && all.count % 2 == 0)
            #expect(all.enumerated().allSatisfy { index, event in
                if case .lost = event { return index % 2 == 0 } else { return index % 2 == 1 }
            })
        }
    }
}
