import CairnCore
@testable import CairnQueue
import CairnTesting
import Foundation
import PostgresNIO
import Testing

/// The races the lease token settles, made to happen: a trigger holds one statement inside its row lock (a delay
/// injected into the real statement), and the racing statement is sent while it sleeps there, so it waits on the
/// row and is judged against what the first one committed.
@Suite struct LeaseRaceTests {
    let location: PostgresLocation

    init() throws {
        location = PostgresLocation(endpoint: .socket(folder: try TestPostgres.socketFolder(), port: 5432),
                                    database: try TestPostgres.freshDatabase())
    }

    /// How long the delayed statement sleeps holding the row: the poll that waits for the sleep and the racing
    /// statement must both land inside it even while the whole suite loads the machine (2 s once was not enough).
    static let heldSeconds = 6

    /// Makes every update that moves a running job to `state` sleep `seconds` after it has locked the job's row.
    static func delayUpdates(of queue: PostgresWorkQueue, into state: String, seconds: Int) async throws {
        try await queue.client.query("""
            CREATE FUNCTION cairn_test_delay() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF OLD.state = 'running' AND NEW.state = \(unescaped: "'\(state)'") THEN
                PERFORM pg_sleep(\(unescaped: String(seconds)));
              END IF;
              RETURN NEW;
            END $$
            """)
        try await queue.client.query("""
            CREATE TRIGGER cairn_test_delay BEFORE UPDATE ON cairn_job FOR EACH ROW EXECUTE FUNCTION cairn_test_delay()
            """)
    }

    /// Waits until a statement of this database sleeps in the trigger (it holds the row's lock from then on).
    static func waitUntilSomeoneSleeps(in queue: PostgresWorkQueue) async throws {
        for _ in 0..<400 {
            let rows = try await queue.client.query("""
                SELECT count(*)::bigint FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'
                """)
            for try await sleeping in rows.decode(Int.self) where sleeping > 0 { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        Issue.record("no statement reached the injected delay")
    }

    @Test func aCompletionThatArrivesWhileARescuerHoldsTheLeaseFinishesNothing() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(PostgresWorkQueueTests.work(1))
            let late = try #require(try await queue.claim(worker: UUID(), limit: 1, ttl: .seconds(-1)).first)
            try await Self.delayUpdates(of: queue, into: "waiting", seconds: Self.heldSeconds)
            let rescue = Task { try await queue.rescueExpired() }
            try await Self.waitUntilSomeoneSleeps(in: queue)
            // The rescuer has read and locked the lease; the worker's result comes now.
            let finished = try await queue.complete([(late, "late result")])
            #expect(try await rescue.value == 1)
            #expect(finished.isEmpty)
            #expect(try await queue.outcomes(of: [late.job]).isEmpty)
            let again = try #require(try await queue.claim(worker: UUID(), limit: 1, ttl: .seconds(15)).first)
            #expect(again.job == late.job && again.token != late.token && again.attempt == 2)
        }
    }

    @Test func aHeartbeatThatArrivesWhileARescuerHoldsTheLeaseKeepsNothing() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(PostgresWorkQueueTests.work(1))
            let worker = UUID()
            // Alive, but declared dead: its lease expired before its beat came.
            let lease = try #require(try await queue.claim(worker: worker, limit: 1, ttl: .seconds(-1)).first)
            try await Self.delayUpdates(of: queue, into: "waiting", seconds: Self.heldSeconds)
            let rescue = Task { try await queue.rescueExpired() }
            try await Self.waitUntilSomeoneSleeps(in: queue)
            let kept = try await queue.heartbeat(worker: worker, leases: [lease], ttl: .seconds(60))
            #expect(try await rescue.value == 1)
            #expect(kept.isEmpty)
            #expect(try await queue.complete([lease]).isEmpty)
            let status = try await queue.status()
            #expect(status.waiting == 1 && status.running == 0 && status.done == 0)
        }
    }

    @Test func aRescueThatArrivesWhileACompletionHoldsTheLeaseTakesNothingBack() async throws {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            try await queue.enqueue(PostgresWorkQueueTests.work(1))
            // Expired, but its worker's completion got there first.
            let lease = try #require(try await queue.claim(worker: UUID(), limit: 1, ttl: .seconds(-1)).first)
            try await Self.delayUpdates(of: queue, into: "done", seconds: Self.heldSeconds)
            let completion = Task { try await queue.complete([(lease, "made in time")]) }
            try await Self.waitUntilSomeoneSleeps(in: queue)
            #expect(try await queue.rescueExpired() == 0)
            #expect(try await completion.value == [lease])
            #expect(try await queue.outcomes(of: [lease.job]) == [lease.job: .done(result: "made in time")])
        }
    }
}
