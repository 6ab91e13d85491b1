import CairnQueue
import CairnTesting
import Foundation
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
            #expect(try await queue.enqueue(Self.work(3)) == 3)
            // The same content and kind again, while waiting: the partial unique index drops it.
            #expect(try await queue.enqueue(Self.work(3)) == 0)
            #expect(try await queue.enqueue(Self.work(1, kind: .preview)) == 1)

            let worker = UUID()
            try await queue.register(worker: worker, host: "test", pid: 1)
            let leases = try await queue.claim(worker: worker, limit: 2, ttl: .seconds(15))
            #expect(leases.count == 2)
            #expect(Set(leases.map(\.token)).count == 2)
            #expect(leases.allSatisfy { $0.attempt == 1 && $0.work.payload.hasPrefix("originals/") })

            #expect(try await queue.complete(leases) == leases)
            // Finished work may be queued again (a library that lost the derivative).
            #expect(try await queue.enqueue([leases[0].work]) == 1)

            let status = try await queue.status()
            #expect(status.done == 2 && status.waiting == 3 && status.running == 0)
            #expect(status.oldestWaitingAge != nil)
            #expect(status.workers.map(\.id) == [worker])
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
            try await queue.enqueue(Self.work(1), maxAttempts: 2)
            let worker = UUID()
            for attempt in 1...2 {
                let lease = try #require(try await queue.claim(worker: worker, limit: 1, ttl: .seconds(15)).first)
                #expect(lease.attempt == attempt)
                #expect(try await queue.fail(lease, reason: "decoder said no", retryAfter: .zero))
            }
            #expect(try await queue.claim(worker: worker, limit: 1, ttl: .seconds(15)).isEmpty)
            #expect(try await queue.status().failed == 1)
            // Failed for good, the content's work may be queued anew.
            #expect(try await queue.enqueue(Self.work(1)) == 1)
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
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(Self.work(2))
            try TestPostgres.psql("""
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = '\(location.database)' AND pid <> pg_backend_pid()
                """)
            // A pooled connection may still be found dead once; the next call gets a new one.
            var claimed: [Lease] = []
            for _ in 0..<5 where claimed.isEmpty {
                claimed = (try? await queue.claim(worker: UUID(), limit: 2, ttl: .seconds(15))) ?? []
            }
            #expect(claimed.count == 2)
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
