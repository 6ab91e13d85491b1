import ArgumentParser
import CairnCore
import CairnQueue
import Foundation
import Synchronization

/// The shared work queue on this machine: no-op jobs through `QueueWorker`s in one process against a PostgreSQL
/// cluster of the benchmark's own with durable commits (`scripts/postgres-cluster start DIR durable`), batched
/// (claims of up to 64, completions together) and unbatched (claims of one, a statement per completion),
/// interleaved per round; then the time from an enqueue to the start of its job at an idle worker (its NOTIFY).
struct QueueBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "No-op jobs per second batched and unbatched, commits and WAL bytes per job, and enqueue-to-start latency.")

    @Option(help: "Jobs per run.")
    var jobs = 20_000

    @Option(help: "Workers, each in this process with its own lanes.")
    var workers = 2

    @Option(help: "Jobs each worker runs at once.")
    var lanes = 32

    @Option(help: "Rounds; batched and unbatched alternate within each.")
    var rounds = 3

    @Option(help: "Enqueues timed to the start of their job.")
    var latencySamples = 200

    struct Run { var seconds: Double; var commits: Double; var walBytes: Double }

    func run() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        let script = root + "/scripts/postgres-cluster"
        let folder = NSTemporaryDirectory() + "cairn-bench-pg-" + UUID().uuidString
        // The server would hold a pipe for the script's output open: it goes to a file.
        try Peers.run(["bash", "-c", "\"$0\" start \"$1\" durable >\"$1.log\" 2>&1", script, folder])
        defer { _ = try? Peers.run(["bash", "-c", "\"$0\" stop \"$1\"; rm -f \"$1.log\"", script, folder]) }

        var results: [Bool: [Run]] = [true: [], false: []]
        for round in 0..<rounds {
            for batched in round % 2 == 0 ? [true, false] : [false, true] {
                let run = try await measure(batched: batched, folder: folder)
                results[batched]!.append(run)
                print(String(format: "round %d %@: %.0f jobs/s, %.2f commits/job, %.0f WAL bytes/job", round + 1,
                             batched ? "batched" : "unbatched", Double(jobs) / run.seconds, run.commits / Double(jobs),
                             run.walBytes / Double(jobs)))
            }
        }
        print("\nmode        jobs/s min/median/max          commits/job   WAL bytes/job   (\(jobs) jobs, \(workers) workers x \(lanes) lanes)")
        for batched in [true, false] {
            let runs = results[batched]!
            let rates = runs.map { Double(jobs) / $0.seconds }.sorted()
            print(String(format: "%-10@ %7.0f / %7.0f / %7.0f   %11.2f   %13.0f", batched ? "batched" : "unbatched",
                         rates.first!, median(rates), rates.last!, median(runs.map(\.commits)) / Double(jobs),
                         median(runs.map(\.walBytes)) / Double(jobs)))
        }
        let latencies = try await enqueueToStart(folder: folder).sorted()
        print(String(format: "\nenqueue to start, idle worker woken by NOTIFY (%d samples): p50 %.2f ms, p95 %.2f ms, max %.2f ms",
                     latencies.count, latencies[latencies.count / 2] * 1000, latencies[latencies.count * 95 / 100] * 1000,
                     latencies.last! * 1000))
    }

    private func measure(batched: Bool, folder: String) async throws -> Run {
        let database = try freshDatabase(folder: folder)
        let location = PostgresLocation(endpoint: .socket(folder: folder, port: 5432), database: database)
        return try await PostgresWorkQueue.withQueue(at: location) { queue in
            for start in stride(from: 0, to: jobs, by: 1000) {
                try await queue.enqueue((start..<min(jobs, start + 1000)).map {
                    QueuedWork(library: "/bench", checksum: String(format: "%040x", $0), kind: .thumbnail)
                })
            }
            let commits0 = try stat("SELECT xact_commit FROM pg_stat_database WHERE datname = '\(database)'", folder)
            let wal0 = try stat("SELECT wal_bytes FROM pg_stat_wal", folder)
            var settings = QueueWorker.Settings()
            settings.lanes = lanes
            settings.batch = batched ? 64 : 1
            settings.batchesCompletions = batched
            // The runs are counted here, and the queue's status read only once every job has run: a status every
            // 10 ms from the start took a good part of the server's time on this machine.
            let ran = Atomic<Int>(0)
            let pool = (0..<workers).map { _ in
                QueueWorker(queue: queue, settings: settings) { _ in
                    ran.add(1, ordering: .relaxed)
                    return ""
                }
            }
            let clock = ContinuousClock()
            let start = clock.now
            let running = pool.map { worker in Task { try await worker.run() } }
            while ran.load(ordering: .relaxed) < jobs { try await Task.sleep(for: .milliseconds(10)) }
            while try await queue.status().done < jobs { try await Task.sleep(for: .milliseconds(10)) }
            let elapsed = clock.now - start
            pool.forEach { $0.stop() }
            for run in running { _ = try await run.value }
            let commits = try stat("SELECT xact_commit FROM pg_stat_database WHERE datname = '\(database)'", folder) - commits0
            let wal = try stat("SELECT wal_bytes FROM pg_stat_wal", folder) - wal0
            return Run(seconds: elapsed.seconds, commits: commits, walBytes: wal)
        }
    }

    private func enqueueToStart(folder: String) async throws -> [Double] {
        let location = PostgresLocation(endpoint: .socket(folder: folder, port: 5432), database: try freshDatabase(folder: folder))
        return try await PostgresWorkQueue.withQueue(at: location) { queue in
            let started = Locked<[Int: ContinuousClock.Instant]>([:])
            var settings = QueueWorker.Settings()
            settings.idlePoll = .seconds(3600)
            let worker = QueueWorker(queue: queue, settings: settings) { lease in
                let now = ContinuousClock.now
                if let sample = Int(lease.work.payload) { started.withLock { $0[sample] = now } }
                return ""
            }
            let running = Task { try await worker.run() }
            try await Task.sleep(for: .seconds(1))  // the worker claims nothing and listens
            var latencies: [Double] = []
            for sample in 0..<latencySamples {
                let enqueued = ContinuousClock.now
                try await queue.enqueue([QueuedWork(library: "/bench", checksum: "latency-\(sample)", kind: .probe, payload: "\(sample)")])
                while started.withLock({ $0[sample] }) == nil { try await Task.sleep(for: .microseconds(200)) }
                let start = started.withLock { $0[sample]! }
                latencies.append((start - enqueued).seconds)
                try await Task.sleep(for: .milliseconds(20))
            }
            worker.stop()
            _ = try await running.value
            return latencies
        }
    }

    private func freshDatabase(folder: String) throws -> String {
        let name = "bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        _ = try psql("CREATE DATABASE \(name)", folder)
        return name
    }

    private func stat(_ sql: String, _ folder: String) throws -> Double {
        Double(try psql(sql, folder)) ?? 0
    }

    private func psql(_ sql: String, _ folder: String) throws -> String {
        try Peers.run(["psql", "-X", "-q", "-A", "-t", "-h", folder, "-U", "postgres", "-d", "postgres", "-c", sql])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}
