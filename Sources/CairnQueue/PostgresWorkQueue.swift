import CairnCore
import Foundation
import Logging
import PostgresNIO

/// The derivative work of libraries shared by several workers, in PostgreSQL: a row per (library, content, kind),
/// claimed in batches with `FOR UPDATE SKIP LOCKED` under a lease (a token and an expiry that the worker's
/// heartbeats push back). Every change a worker makes is conditional on its token, so a worker that lost its
/// lease (it stopped beating, was rescued and the job taken by another) changes nothing: its result is dropped,
/// which is safe because what it writes is addressed by content and written once.
///
/// All times are the server's (`now()`), so the workers' clocks never matter.
public final class PostgresWorkQueue: Sendable {
    /// The channel a NOTIFY on enqueue wakes idle workers on: one per enqueued batch, never one per job.
    public static let channel = "cairn_work"
    /// The channel a NOTIFY wakes those waiting for jobs to end on: at most one per `endedNoticeInterval` from each
    /// process whose workers finished or failed jobs meanwhile.
    public static let endedChannel = "cairn_work_ended"
    public static let endedNoticeInterval: Duration = .milliseconds(20)

    /// How long one call (a claim, a completion, a heartbeat…) may take before it is cancelled and throws
    /// `TimeLimitExceeded`, which a worker meets as it meets a lost server: it tries again after a pause.
    public static let defaultCallTimeLimit: Duration = .seconds(30)

    let client: PostgresClient
    let logger = Logger(label: "cairn.queue", factory: { _ in SwiftLogNoOpLogHandler() })
    /// Why a limit at all: after its connections were terminated, the pool was once seen never to make a new one,
    /// and a call without a limit waited for it for ever.
    let callTimeLimit: Duration
    let endedNotice = EndedNotice(interval: PostgresWorkQueue.endedNoticeInterval)

    init(client: PostgresClient, callTimeLimit: Duration = PostgresWorkQueue.defaultCallTimeLimit) {
        self.client = client
        self.callTimeLimit = callTimeLimit
    }

    /// Connects to `location`, brings the schema up to date and runs `body` with the queue; the connections
    /// close when `body` returns.
    public static func withQueue<Result: Sendable>(at location: PostgresLocation,
                                                   callTimeLimit: Duration = PostgresWorkQueue.defaultCallTimeLimit,
                                                   _ body: (PostgresWorkQueue) async throws -> Result) async throws -> Result {
        let client = PostgresClient(configuration: location.clientConfiguration())
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let queue = PostgresWorkQueue(client: client, callTimeLimit: callTimeLimit)
            try await QueueSchema.migrate(client, logger: queue.logger)
            group.addTask { await queue.endedNotice.run { await queue.tellEnded() } }
            let result = try await body(queue)
            await queue.endedNotice.flush { await queue.tellEnded() }
            return result
        }
    }

    // MARK: Producers

    /// Queues `work`; returns, for each item in order, the job that does it: the one queued now, the one already
    /// waiting or running for its (library, checksum, kind), which is not queued twice, or (for work that
    /// `reusesDoneJob`) the key's newest job when it is done with the same payload. One statement, and one NOTIFY
    /// when something was queued.
    @discardableResult
    public func enqueue(_ work: [QueuedWork], maxAttempts: Int = 3) async throws -> [Int64] {
        try await bounded("queueing work") { [self] in
            guard !work.isEmpty else { return [] }
            let libraries = work.map(\.library), checksums = work.map(\.checksum)
            let kinds = work.map(\.kind.rawValue), payloads = work.map(\.payload), reuses = work.map(\.reusesDoneJob)
            return try await client.withTransaction(logger: logger) { connection in
                // The newest job of a key is its unfinished one when there is one: a key gets a new job only once the
                // last has ended, and not even then when that one is done and may stand for the work.
                let rows = try await connection.query("""
                    WITH input AS (
                      SELECT * FROM unnest(\(libraries)::text[], \(checksums)::text[], \(kinds)::text[], \(payloads)::text[],
                                           \(reuses)::boolean[])
                        WITH ORDINALITY AS w(l, c, k, p, r, n)),
                    reused AS (
                      SELECT i.n, newest.id FROM input i
                      CROSS JOIN LATERAL (SELECT j.id, j.state, j.payload FROM cairn_job j
                                          WHERE j.library = i.l AND j.checksum = i.c AND j.kind = i.k
                                          ORDER BY j.id DESC LIMIT 1) newest
                      WHERE i.r AND newest.state = 'done' AND newest.payload = i.p),
                    queued AS (
                      INSERT INTO cairn_job (library, checksum, kind, payload, max_attempts)
                      SELECT l, c, k, p, \(maxAttempts) FROM input WHERE n NOT IN (SELECT n FROM reused) ORDER BY n
                      ON CONFLICT (library, checksum, kind) WHERE state IN ('waiting', 'running') DO NOTHING
                      RETURNING id, library, checksum, kind)
                    SELECT i.n, COALESCE(r.id, q.id, (SELECT max(j.id) FROM cairn_job j
                                                      WHERE j.library = i.l AND j.checksum = i.c AND j.kind = i.k)),
                      q.id IS NOT NULL
                    FROM input i LEFT JOIN reused r ON r.n = i.n
                      LEFT JOIN queued q ON r.n IS NULL AND q.library = i.l AND q.checksum = i.c AND q.kind = i.k
                    ORDER BY i.n
                    """, logger: logger)
                var jobs = [Int64](repeating: 0, count: work.count)
                var queued = false, unseen: [Int] = []
                for try await (position, job, isNew) in rows.decode((Int, Int64?, Bool).self) {
                    if let job { jobs[position - 1] = job } else { unseen.append(position - 1) }
                    queued = queued || isNew
                }
                // A job another producer queued while this statement ran is outside its snapshot: the next sees it.
                for index in unseen {
                    let item = work[index]
                    for try await job in try await connection.query("""
                        SELECT max(id) FROM cairn_job
                        WHERE library = \(item.library) AND checksum = \(item.checksum) AND kind = \(item.kind.rawValue)
                        """, logger: logger).decode(Int64.self) { jobs[index] = job }
                }
                if queued { try await connection.query("SELECT pg_notify(\(Self.channel), '')", logger: logger) }
                return jobs
            }
        }
    }

    /// How the jobs among `jobs` that have ended ended; those still waiting or running are absent.
    public func outcomes(of jobs: [Int64]) async throws -> [Int64: JobOutcome] {
        try await bounded("reading jobs' outcomes") { [self] in
            guard !jobs.isEmpty else { return [:] }
            var outcomes: [Int64: JobOutcome] = [:]
            for try await (id, state, result, reason, category, damaged) in try await client.query("""
                SELECT id, state, result, coalesce(last_error, ''), failure_category, damaged FROM cairn_job
                WHERE id = ANY(\(jobs)::bigint[]) AND state IN ('done', 'failed')
                """, logger: logger).decode((Int64, String, String, String, String?, Bool).self) {
                outcomes[id] = state == "done"
                    ? .done(result: result)
                    : .failed(reason: reason, category: FailureCategory(stored: category), damaged: damaged)
            }
            return outcomes
        }
    }

    // MARK: Workers

    /// Records a worker as alive (its first heartbeat), and forgets workers silent for a day: a killed worker never
    /// says goodbye, and `status` would list it for ever.
    public func register(worker: UUID, host: String, pid: Int) async throws {
        try await bounded("registering a worker") { [self] in
            try await client.query("""
                WITH forgotten AS (DELETE FROM cairn_worker WHERE last_beat < now() - interval '1 day' AND id <> \(worker))
                INSERT INTO cairn_worker (id, host, pid) VALUES (\(worker), \(host), \(pid))
                ON CONFLICT (id) DO UPDATE SET last_beat = now()
                """, logger: logger)
        }
    }

    /// Removes a worker that stopped cleanly (its leases ended or went back) from the list `status` shows.
    public func unregister(worker: UUID) async throws {
        try await bounded("unregistering a worker") { [self] in
            try await client.query("DELETE FROM cairn_worker WHERE id = \(worker)", logger: logger)
        }
    }

    /// Claims up to `limit` waiting jobs for `worker` (of `library` only, when given), each under a lease of its own
    /// that expires `ttl` from now.
    public func claim(worker: UUID, library: String? = nil, limit: Int, ttl: Duration) async throws -> [Lease] {
        try await bounded("a claim") { [self] in
            let rows = try await client.query("""
                WITH picked AS (
                  SELECT id FROM cairn_job WHERE state = 'waiting' AND run_after <= now()
                    AND (\(library)::text IS NULL OR library = \(library))
                  ORDER BY run_after, id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                UPDATE cairn_job j SET state = 'running', attempts = j.attempts + 1, lease_token = gen_random_uuid(),
                  leased_by = \(worker), lease_expires = now() + \(ttl.seconds)::float8 * interval '1 second'
                FROM picked WHERE j.id = picked.id
                RETURNING j.id, j.lease_token, j.library, j.checksum, j.kind, j.payload, j.attempts
                """, logger: logger)
            var leases: [Lease] = []
            for try await (id, token, library, checksum, kind, payload, attempt)
                in rows.decode((Int64, UUID, String, String, String, String, Int).self) {
                guard let kind = QueuedWork.Kind(rawValue: kind) else { continue }
                leases.append(Lease(job: id, token: token, work: QueuedWork(library: library, checksum: checksum, kind: kind, payload: payload),
                                    attempt: attempt))
            }
            return leases.sorted { $0.job < $1.job }
        }
    }

    /// Pushes back the expiry of `leases` (a worker's heartbeat) and records the worker alive; returns the tokens
    /// still held. A lease missing from the answer was lost: its work should stop, its result will be dropped.
    public func heartbeat(worker: UUID, leases: [Lease], ttl: Duration) async throws -> Set<UUID> {
        try await bounded("a heartbeat") { [self] in
            try await client.query("UPDATE cairn_worker SET last_beat = now() WHERE id = \(worker)", logger: logger)
            guard !leases.isEmpty else { return [] }
            let rows = try await client.query("""
                UPDATE cairn_job SET lease_expires = now() + \(ttl.seconds)::float8 * interval '1 second'
                WHERE state = 'running' AND leased_by = \(worker) AND lease_token = ANY(\(leases.map(\.token))::uuid[])
                RETURNING lease_token
                """, logger: logger)
            var held = Set<UUID>()
            for try await token in rows.decode(UUID.self) { held.insert(token) }
            return held
        }
    }

    /// Finishes jobs with their results in one statement (those waiting for them are woken by the next "ended"
    /// NOTIFY, `EndedNotice`); returns the leases finished. A lease whose token is no longer its job's finishes nothing (another worker holds the job now,
    /// or it was released): its result is dropped.
    public func complete(_ finished: [(lease: Lease, result: String)]) async throws -> [Lease] {
        try await bounded("a completion") { [self] in
            guard !finished.isEmpty else { return [] }
            let leases = finished.map(\.lease), results = finished.map(\.result)
            let ids = leases.map(\.job), tokens = leases.map(\.token)
            let rows = try await client.query("""
                UPDATE cairn_job j SET state = 'done', finished_at = now(), result = c.result, lease_token = NULL,
                  leased_by = NULL, lease_expires = NULL
                FROM unnest(\(ids)::bigint[], \(tokens)::uuid[], \(results)::text[]) AS c(id, token, result)
                WHERE j.id = c.id AND j.lease_token = c.token AND j.state = 'running'
                RETURNING j.id
                """, logger: logger)
            var done = Set<Int64>()
            for try await id in rows.decode(Int64.self) { done.insert(id) }
            if !done.isEmpty { endedNotice.jobsEnded() }
            return leases.filter { done.contains($0.job) }
        }
    }

    /// Finishes `leases` with empty results.
    public func complete(_ leases: [Lease]) async throws -> [Lease] {
        try await complete(leases.map { ($0, "") })
    }

    /// Gives `leases` back unfinished (a worker stopping): the jobs wait again, their attempt counts as they were
    /// before the claim. Returns those given back.
    @discardableResult
    public func release(_ leases: [Lease]) async throws -> [Lease] {
        try await finish(leases, sql: { ids, tokens in """
            UPDATE cairn_job j SET state = 'waiting', attempts = j.attempts - 1, lease_token = NULL, leased_by = NULL,
              lease_expires = NULL
            FROM unnest(\(ids)::bigint[], \(tokens)::uuid[]) AS c(id, token)
            WHERE j.id = c.id AND j.lease_token = c.token AND j.state = 'running'
            RETURNING j.id
            """ })
    }

    /// Records a failed attempt: the job waits `retryAfter` and runs again, or fails for good once it has had its
    /// attempts or when no attempt can do better (`final`: damaged media; its waiters are told as for a completion).
    /// False if the lease was lost (nothing recorded).
    public func fail(_ lease: Lease, reason: String, category: FailureCategory = .other, retryAfter: Duration,
                     final: Bool = false) async throws -> Bool {
        try await bounded("recording a failed job") { [self] in
            let rows = try await client.query("""
                UPDATE cairn_job SET state = CASE WHEN \(final) OR attempts >= max_attempts THEN 'failed' ELSE 'waiting' END,
                  finished_at = CASE WHEN \(final) OR attempts >= max_attempts THEN now() END,
                  run_after = now() + \(retryAfter.seconds)::float8 * interval '1 second',
                  last_error = \(reason), failure_category = \(category.rawValue), damaged = \(final), lease_token = NULL, leased_by = NULL, lease_expires = NULL
                WHERE id = \(lease.job) AND lease_token = \(lease.token) AND state = 'running'
                RETURNING state
                """, logger: logger)
            var recorded: String?
            for try await state in rows.decode(String.self) { recorded = state }
            guard let recorded else { return false }
            if recorded == "failed" { endedNotice.jobsEnded() }
            return true
        }
    }

    /// Takes back every lease past its expiry (its worker stopped beating): the job waits again, or fails for good
    /// once it has had its attempts. Any worker may call it; returns how many were taken back.
    @discardableResult
    public func rescueExpired() async throws -> Int {
        try await bounded("a rescue of expired leases") { [self] in
            let rows = try await client.query("""
                UPDATE cairn_job SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'waiting' END,
                  finished_at = CASE WHEN attempts >= max_attempts THEN now() END,
                  last_error = 'lease expired: worker ' || leased_by::text || ' stopped beating',
                  lease_token = NULL, leased_by = NULL, lease_expires = NULL
                WHERE state = 'running' AND lease_expires < now()
                RETURNING id
                """, logger: logger)
            var rescued = 0
            for try await _ in rows.decode(Int64.self) { rescued += 1 }
            return rescued
        }
    }

    /// Deletes up to `limit` jobs that ended (done or failed) more than `keptFor` ago, oldest first; returns how
    /// many. What they made is in the libraries' catalogs by then, or is made again by the next import that asks.
    @discardableResult
    public func pruneFinished(keptFor: Duration, limit: Int = 10_000) async throws -> Int {
        try await bounded("pruning finished jobs") { [self] in
            let seconds = Double(keptFor.components.seconds)
            let rows = try await client.query("""
                DELETE FROM cairn_job WHERE id IN (
                  SELECT id FROM cairn_job
                  WHERE state IN ('done', 'failed') AND finished_at < now() - make_interval(secs => \(seconds))
                  ORDER BY finished_at LIMIT \(limit))
                RETURNING id
                """, logger: logger)
            var deleted = 0
            for try await _ in rows.decode(Int64.self) { deleted += 1 }
            return deleted
        }
    }

    /// Counts by state, the oldest waiting job's age, and each worker's leases and silence.
    public func status() async throws -> QueueStatus {
        try await bounded("reading the queue's status") { [self] in
            var status = QueueStatus()
            for try await (state, count, oldest) in try await client.query("""
                SELECT state, count(*)::bigint, extract(epoch FROM now() - min(enqueued_at))::float8
                FROM cairn_job GROUP BY state
                """, logger: logger).decode((String, Int, Double?).self) {
                switch state {
                case "waiting": status.waiting = count; status.oldestWaitingAge = oldest
                case "running": status.running = count
                case "done": status.done = count
                default: status.failed = count
                }
            }
            for try await (id, host, pid, leases, silence) in try await client.query("""
                SELECT w.id, w.host, w.pid,
                  (SELECT count(*) FROM cairn_job j WHERE j.state = 'running' AND j.leased_by = w.id)::bigint,
                  extract(epoch FROM now() - w.last_beat)::float8
                FROM cairn_worker w ORDER BY w.started_at
                """, logger: logger).decode((UUID, String, Int, Int, Double).self) {
                status.workers.append(.init(id: id, host: host, pid: pid, leases: leases, silentFor: silence))
            }
            status.imports = try await LibraryRunLock.holders(client, logger: logger)
            return status
        }
    }

    /// Listens for NOTIFYs on `channel` until the task is cancelled, again after a growing pause (0.1 s doubling to
    /// 5 s) whenever the connection is lost. Every start of listening counts as a NOTIFY: what happened while
    /// nobody listened is caught up by whatever the caller does on one.
    func keepListening(on channel: String, _ notified: @escaping @Sendable () -> Void) async {
        var pause = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                try await listen(on: channel, notified)
                pause = .milliseconds(100)
            } catch {
                pause = min(pause * 2, .seconds(5))
            }
            try? await Task.sleep(for: pause)
        }
    }

    /// Listens for NOTIFYs on `channel` on a connection of its own until the task is cancelled or the connection is
    /// lost, calling `notified` once listening starts (so a caller catches up on what it missed) and at every NOTIFY.
    func listen(on channel: String, _ notified: @escaping @Sendable () -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                notified()
                for try await _ in notifications { notified() }
            }
        }
    }

    /// Wakes those waiting for jobs to end; a NOTIFY lost to a failed call is made up by their polls.
    private func tellEnded() async {
        _ = try? await bounded("telling that jobs ended") { [self] in
            try await client.query("SELECT pg_notify(\(Self.endedChannel), '')", logger: logger)
        }
    }

    /// Runs one call under the time limit.
    @discardableResult
    private func bounded<Value: Sendable>(_ operation: String,
                                          _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await withTimeLimit(callTimeLimit, operation, body)
    }

    private func finish(_ leases: [Lease], sql: ([Int64], [UUID]) -> PostgresQuery) async throws -> [Lease] {
        guard !leases.isEmpty else { return [] }
        let query = sql(leases.map(\.job), leases.map(\.token))
        return try await bounded("giving leases back") { [self] in
            let rows = try await client.query(query, logger: logger)
            var finished = Set<Int64>()
            for try await id in rows.decode(Int64.self) { finished.insert(id) }
            return leases.filter { finished.contains($0.job) }
        }
    }
}
