import CairnCore
@testable import CairnQueue
import CairnTesting
import Foundation
import PostgresNIO
import Testing

/// The queue against a real PostgreSQL (the suite's throwaway cluster), each test in a database of its own.
@Suite struct PostgresWorkQueueTests {
    let location: PostgresLocation

    init() throws {
        location = PostgresLocation(endpoint: .socket(folder: try TestPostgres.socketFolder(), port: 5432),
                                    database: try TestPostgres.freshDatabase())
    }

    static func work(_ count: Int, kind: QueuedWork.Kind = .thumbnail, library: String = "/lib") -> [QueuedWork] {
        (0..<count).map { QueuedWork(library: library, checksum: String(format: "%040x", $0), kind: kind, payload: "originals/\($0).jpg") }
    }

    @Test func aContentsWorkIsQueuedOnceWhileUnfinishedAndClaimedUnderTokensOfItsOwn() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            let jobs = try await queue.enqueue(Self.work(3))
            #expect(Set(jobs).count == 3)
            // The same content and kind again, while waiting: the partial unique index keeps one job, named again.
            #expect(try await queue.enqueue(Self.work(3)) == jobs)
            let preview = try await queue.enqueue(Self.work(1, kind: .preview))
            #expect(preview.count == 1 && !jobs.contains(preview[0]))

            let worker = UUID()
            try await queue.register(worker: worker, host: "test", pid: 1)
            let leases = try await queue.claim(worker: worker, limit: 2, ttl: .seconds(15))
            #expect(leases.count == 2)
            #expect(Set(leases.map(\.token)).count == 2)
            #expect(leases.allSatisfy { $0.attempt == 1 && $0.work.payload.hasPrefix("originals/") })

            #expect(try await queue.complete(leases) == leases)
            // Finished work may be queued again (a library that lost the derivative).
            let again = try await queue.enqueue([leases[0].work])
            #expect(again.count == 1 && again[0] > jobs.max()!)

            let status = try await queue.status()
            #expect(status.done == 2 && status.waiting == 3 && status.running == 0)
            #expect(status.oldestWaitingAge != nil)
            #expect(status.workers.map(\.id) == [worker])
        }
    }

    @Test func aDoneJobStandsForItsWorkOnlyWhenAskedAndOnlyForTheSamePayload() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            func reusing(_ work: [QueuedWork]) -> [QueuedWork] { work.map { var work = $0; work.reusesDoneJob = true; return work } }
            let jobs = try await queue.enqueue(Self.work(3))
            // While unfinished, asking to reuse names the same jobs.
            #expect(try await queue.enqueue(reusing(Self.work(3))) == jobs)
            let worker = UUID()
            let leases = try await queue.claim(worker: worker, limit: 2, ttl: .seconds(15))
            #expect(try await queue.complete(leases.map { ($0, "made \($0.job)") }).count == 2)
            let doneJobs = Set(leases.map(\.job))
            let failed = try #require(try await queue.claim(worker: worker, limit: 1, ttl: .seconds(15)).first)
            #expect(try await queue.fail(failed, reason: "damaged", retryAfter: .zero, final: true))

            // Asked to reuse: the two done jobs stand (no job queued, their results read back); the failed one's
            // work is queued anew.
            let again = try await queue.enqueue(reusing(Self.work(3)))
            let reused = zip(jobs, again).filter { $0 == $1 }.map(\.0)
            #expect(Set(reused) == doneJobs, "\(jobs) \(again)")
            let outcomes = try await queue.outcomes(of: Array(doneJobs))
            #expect(outcomes == Dictionary(uniqueKeysWithValues: leases.map { ($0.job, JobOutcome.done(result: "made \($0.job)")) }))
            #expect(try await queue.status().waiting == 1)
            // Not asked, or another payload for the same content: new work.
            let fresh = try await queue.enqueue([Self.work(1)[0]])
            #expect(!jobs.contains(fresh[0]))
            var moved = reusing(Self.work(3))[1]
            moved.payload = "originals/elsewhere.jpg"
            let other = try await queue.enqueue([moved])
            #expect(!jobs.contains(other[0]) && other != fresh)
        }
    }

    @Test func jobsThatEndedLongerAgoThanTheyAreKeptAreDeletedAndNoOthers() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            let jobs = try await queue.enqueue(Self.work(5))
            let worker = UUID()
            let leases = try await queue.claim(worker: worker, limit: 4, ttl: .seconds(15))
            #expect(try await queue.complete(Array(leases.prefix(2))).count == 2)
            #expect(try await queue.fail(leases[2], reason: "damaged", retryAfter: .zero, final: true))
            // One done and the failed one ended eight days ago; one done today; one running; one waiting.
            let old = [leases[0].job, leases[2].job]
            try await queue.client.query("UPDATE cairn_job SET finished_at = now() - interval '8 days' WHERE id = ANY(\(old)::bigint[])")
            #expect(try await queue.pruneFinished(keptFor: .seconds(7 * 24 * 3600)) == 2)
            let left = try await queue.client.query("SELECT id FROM cairn_job ORDER BY id").decode(Int64.self)
            var ids: [Int64] = []
            for try await id in left { ids.append(id) }
            #expect(ids == jobs.filter { !old.contains($0) })
            #expect(try await queue.pruneFinished(keptFor: .seconds(7 * 24 * 3600)) == 0)
        }
    }

    @Test func aWorkerThatStopsLeavesTheListAndOneSilentForADayIsForgotten() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            let killed = UUID(), stopping = UUID(), next = UUID()
            try await queue.register(worker: killed, host: "a", pid: 1)
            try await queue.register(worker: stopping, host: "b", pid: 2)
            // The killed worker never beat again; a day and a minute later, the next worker starts.
            try await queue.client.query("UPDATE cairn_worker SET last_beat = now() - interval '1 day 1 minute' WHERE id = \(killed)")
            try await queue.unregister(worker: stopping)
            try await queue.register(worker: next, host: "c", pid: 3)
            #expect(try await queue.status().workers.map(\.id) == [next])
        }
    }

    @Test func aLeaseTakenBackByARescuerCannotFinishItsJob() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(Self.work(1))
            let slow = UUID(), rescuer = UUID()
            // A lease already past its expiry: its worker stopped beating (or is alive but late).
            let lost = try #require(try await queue.claim(worker: slow, limit: 1, ttl: .seconds(-1)).first)
            #expect(try await queue.rescueExpired() == 1)
            let taken = try #require(try await queue.claim(worker: rescuer, limit: 1, ttl: .seconds(15)).first)
            #expect(taken.job == lost.job && taken.token != lost.token && taken.attempt == 2)

            // The late worker's completion, heartbeat, failure and release all change nothing.
            #expect(try await queue.complete([lost]).isEmpty)
            #expect(try await queue.heartbeat(worker: slow, leases: [lost], ttl: .seconds(15)).isEmpty)
            #expect(try await queue.fail(lost, reason: "late", retryAfter: .zero) == false)
            #expect(try await queue.release([lost]).isEmpty)

            #expect(try await queue.complete([taken]) == [taken])
            let status = try await queue.status()
            #expect(status.done == 1 && status.running == 0 && status.waiting == 0)
        }
    }

    @Test func aHeartbeatKeepsALeaseFromRescue() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(Self.work(2))
            let worker = UUID()
            let leases = try await queue.claim(worker: worker, limit: 2, ttl: .seconds(-1))
            // Only the first is beaten for: the second stays expired.
            #expect(try await queue.heartbeat(worker: worker, leases: [leases[0]], ttl: .seconds(60)) == [leases[0].token])
            #expect(try await queue.rescueExpired() == 1)
            #expect(try await queue.complete(leases) == [leases[0]])
        }
    }

    @Test func aReleasedJobWaitsAgainWithItsAttemptCountUnchanged() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(Self.work(1))
            let first = try await queue.claim(worker: UUID(), limit: 1, ttl: .seconds(15))
            #expect(first.map(\.attempt) == [1])
            #expect(try await queue.release(first) == first)
            let again = try await queue.claim(worker: UUID(), limit: 1, ttl: .seconds(15))
            #expect(again.map(\.attempt) == [1])
            #expect(again.map(\.job) == first.map(\.job))
        }
    }

    @Test func aFailingJobRunsUntilItsAttemptsAreSpentThenFailsWithItsReason() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            let jobs = try await queue.enqueue(Self.work(1), maxAttempts: 2)
            let worker = UUID()
            for attempt in 1...2 {
                let lease = try #require(try await queue.claim(worker: worker, limit: 1, ttl: .seconds(15)).first)
                #expect(lease.attempt == attempt)
                #expect(try await queue.fail(lease, reason: "decoder said no", retryAfter: .zero))
            }
            #expect(try await queue.claim(worker: worker, limit: 1, ttl: .seconds(15)).isEmpty)
            #expect(try await queue.status().failed == 1)
            // Failed for good, the content's work may be queued anew.
            #expect(try await queue.outcomes(of: jobs) == [jobs[0]: .failed(reason: "decoder said no", category: .other, damaged: false)])
            let anew = try await queue.enqueue(Self.work(1))
            #expect(try await queue.outcomes(of: anew).isEmpty)
        }
    }

    @Test func aJobWhoseWorkersDiedAtEveryTryFailsWithoutAWordAgainstItsInput() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            let jobs = try await queue.enqueue(Self.work(1), maxAttempts: 2)
            for _ in 1...2 {
                _ = try #require(try await queue.claim(worker: UUID(), limit: 1, ttl: .seconds(-1)).first)
                #expect(try await queue.rescueExpired() == 1)
            }
            // A kill is no evidence against a file: the importer may try its work again.
            guard case .failed(let reason, _, let damaged)? = try await queue.outcomes(of: jobs)[jobs[0]] else {
                Issue.record("the job did not fail")
                return
            }
            #expect(reason.hasPrefix("lease expired") && !damaged)
        }
    }

    @Test func concurrentClaimersNeverShareAJob() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(Self.work(400))
            let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let worker = UUID()
                        var mine: [Int64] = []
                        while case let leases = try await queue.claim(worker: worker, limit: 7, ttl: .seconds(15)), !leases.isEmpty {
                            mine += leases.map(\.job)
                            #expect(try await queue.complete(leases).count == leases.count)
                        }
                        return mine
                    }
                }
                return try await group.reduce(into: [Int64]()) { $0 += $1 }
            }
            #expect(claimed.count == 400)
            #expect(Set(claimed).count == 400)
        }
    }

    @Test func theQueueGoesOnAfterItsConnectionsAreTerminated() async throws {
        try await PostgresWorkQueue.withQueue(at: location, callTimeLimit: .seconds(5)) { queue in
            try await queue.enqueue(Self.work(2))
            try TestPostgres.psql("""
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = '\(location.database)' AND pid <> pg_backend_pid()
                """)
            // A pooled connection may still be found dead once; the next call gets a new one. A call sent on it
            // just after it closed never ends (postgres-nio) until the time limit gives it up: without the limit,
            // this test hung now and then on a busy machine.
            var claimed: [Lease] = []
            for _ in 0..<5 where claimed.isEmpty {
                claimed = (try? await queue.claim(worker: UUID(), limit: 2, ttl: .seconds(15))) ?? []
            }
            #expect(claimed.count == 2)
        }
    }

    @Test func aJobsResultReachesItsWaiterAndAFinalFailureEndsItAtOnce() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            let jobs = try await queue.enqueue(Self.work(2), maxAttempts: 5)
            let waiter = JobWaiter(queue: queue, poll: .seconds(30))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await waiter.run() }
                async let first = waiter.outcome(of: jobs[0])
                async let second = waiter.outcome(of: jobs[1])
                let worker = UUID()
                let leases = try await queue.claim(worker: worker, limit: 2, ttl: .seconds(15))
                #expect(try await queue.complete([(leases[0], "{\"made\":1}")]) == [leases[0]])
                // Damaged media: no attempt can do better, so the job fails with four attempts left.
                #expect(try await queue.fail(leases[1], reason: "truncated JPEG", category: .corrupt, retryAfter: .zero, final: true))
                // The poll is 30 s: only the NOTIFY can have woken the waiter in time for this test to end.
                #expect(try await first == .done(result: "{\"made\":1}"))
                #expect(try await second == .failed(reason: "truncated JPEG", category: .corrupt, damaged: true))
                group.cancelAll()
            }
        }
    }

    @Test func aWorkerOfOneLibraryClaimsOnlyThatLibrarysJobs() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(Self.work(3, library: "/a") + Self.work(2, library: "/b"))
            let leases = try await queue.claim(worker: UUID(), library: "/b", limit: 10, ttl: .seconds(15))
            #expect(leases.count == 2 && leases.allSatisfy { $0.work.library == "/b" })
            #expect(try await queue.claim(worker: UUID(), library: "/c", limit: 10, ttl: .seconds(15)).isEmpty)
        }
    }
}

@Suite struct PostgresLocationTests {
    @Test func aURLNamesATCPServerOrASocketFolderAndNeverShowsItsPassword() throws {
        let tcp = try PostgresLocation(url: "postgres://cairn:s3cret@db.lan:5433/photos")
        #expect(tcp.endpoint == .tcp(host: "db.lan", port: 5433))
        #expect(tcp.username == "cairn" && tcp.password == "s3cret" && tcp.database == "photos")
        #expect(!tcp.description.contains("s3cret"))

        let socket = try PostgresLocation(url: "postgresql:///photos?host=/run/postgresql&user=worker")
        #expect(socket.endpoint == .socket(folder: "/run/postgresql", port: 5432))
        #expect(socket.username == "worker" && socket.password == nil && socket.database == "photos")

        #expect(throws: PostgresLocationError.self) { try PostgresLocation(url: "mysql://x@y/z") }
        do {
            _ = try PostgresLocation(url: "postgres://u:hunter2@h:99999/d")
            Issue.record("a port out of range was accepted")
        } catch {
            #expect(!error.description.contains("hunter2"))
        }
    }
}
