import CairnCatalog
import CairnCore
import CairnLibrary
import CairnPipeline
import CairnQueue
import CairnRun
@testable import CairnSharedWork
import CairnTesting
import Foundation
import Glibc
import Testing

/// A new database in the suite's PostgreSQL, as a `--queue` URL and as the location cairn's modules take.
enum QueueDatabase {
    static func fresh() throws -> (url: String, location: PostgresLocation) {
        let folder = try TestPostgres.socketFolder(), database = try TestPostgres.freshDatabase()
        return ("postgres:///\(database)?host=\(folder)", PostgresLocation(endpoint: .socket(folder: folder, port: 5432), database: database))
    }
}

/// `cairn import --queue`, `cairn worker` and `cairn queue status` as real processes over the suite's PostgreSQL.
@Suite struct SharedQueueTests {
    let url: String
    let location: PostgresLocation

    init() throws {
        (url, location) = try QueueDatabase.fresh()
    }

    /// The derived rows of a library, as (source-independent) facts: role, path, size in pixels.
    static func derived(_ root: String) async throws -> [String] {
        let catalog = try Library(root: root, readOnly: true).openCatalog(readOnly: true)
        defer { catalog.close() }
        return try await catalog.allDerivedFiles().map { "\($0.role.rawValue) \($0.path) \($0.width)x\($0.height)" }.sorted()
    }

    /// `folder`'s source: `stills` JPEGs of distinct sizes (content) from `width`, and with `video` a short clip.
    static func source(in folder: TemporaryDirectory, stills: Int, width: Int, height: Int, video: Bool = false) throws -> String {
        let source = folder.path + "/source"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        for index in 0..<stills { try MediaFixtures.jpeg(at: "\(source)/IMG_\(index).JPG", width: width + 8 * index, height: height) }
        if video { try MediaFixtures.video(at: source + "/clip.mp4") }
        return source
    }

    @Test func anImportWhoseWorkAWorkerDidCataloguesWhatAPlainImportDoes() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-shared")
        let source = try Self.source(in: folder, stills: 4, width: 1600, height: 1200, video: true)
        let plain = folder.path + "/plain", shared = folder.path + "/shared"
        let reference = try CairnBinary.run(["import", source, "--library", plain, "--plain"])
        #expect(reference.status == 0, "\(reference.standardError)")

        // A worker refuses a folder that no import has shared: it could be an unmounted disk's empty mount point.
        let refused = try CairnBinary.run(["worker", "--queue", url, "--library", shared])
        #expect(refused.status == 1 && refused.standardError.contains("no shared library here"), "\(refused.standardError)")

        // The import runs none of the queued jobs itself: the worker makes every thumbnail and clip.
        let importing = try ServiceProcess(CairnBinary.path, ["import", source, "--library", shared, "--plain", "--queue", url,
                                                              "--work-lanes", "0"], logPath: folder.path + "/import.log")
        // It started before any worker, with none of the work its own: it says so, and only then does the worker
        // start (started on the library's identity alone, it could beat before the import looked, under load).
        _ = try importing.waitForOutput(matching: "warning: no `cairn worker` has beaten on this queue", timeout: 120)
        let jobLog = folder.path + "/jobs.ndjson"
        let worker = try ServiceProcess(CairnBinary.path, ["worker", "--queue", url, "--library", shared, "--lanes", "2",
                                                           "--job-log", jobLog], logPath: folder.path + "/worker.log")
        try worker.waitForOutput(matching: "lanes, queue")
        importing.process.waitUntilExit()
        #expect(importing.process.terminationStatus == 0, "\(importing.output)")
        kill(worker.pid, SIGTERM)
        worker.process.waitUntilExit()
        #expect(worker.process.terminationStatus == 0, "\(worker.output)")
        // Four thumbnails (each with its preview), four clips, the video's thumbnail: nine jobs, all by the worker.
        #expect(worker.output.contains("stopped: 9 done, 0 failed"), "\(worker.output)")
        // The job log: a start and a done line per job, under the same lease.
        let entries = try String(contentsOfFile: jobLog, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
        let started = Set(entries.filter { $0["event"] as? String == "start" }.compactMap { $0["token"] as? String })
        let done = Set(entries.filter { $0["event"] as? String == "done" }.compactMap { $0["token"] as? String })
        #expect(entries.count == 18 && started.count == 9 && started == done, "\(entries)")

        let made = try await Self.derived(shared)
        #expect(!made.isEmpty)
        #expect(made == (try await Self.derived(plain)))
        for line in made { #expect(FileManager.default.fileExists(atPath: shared + "/" + line.split(separator: " ")[1])) }

        let status = try CairnBinary.run(["queue", "status", "--json"], environment: ["CAIRN_QUEUE": url])
        #expect(status.status == 0)
        #expect(status.standardOutput.contains("\"done\":9") && status.standardOutput.contains("\"waiting\":0"),
                "\(status.standardOutput)")
        // The worker stopped cleanly: it is no longer listed.
        #expect(status.standardOutput.contains("\"workers\":[]"), "\(status.standardOutput)")
    }

    /// `cairn serve --queue`: the page shows the queue's jobs by state and its workers, read again as they change
    /// (in Chromium, without a reload), and `/queue.json` says what `cairn queue status --json` says.
    @Test func thePageShowsTheQueueAndItsWorkersAsTheyChange() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-shared-page")
        let source = try Self.source(in: folder, stills: 4, width: 1600, height: 1200, video: true)
        let shared = folder.path + "/shared"
        // The import leaves every job to workers, and none runs yet: its jobs wait.
        let importing = try ServiceProcess(CairnBinary.path, ["import", source, "--library", shared, "--plain", "--queue", url,
                                                              "--work-lanes", "0"], logPath: folder.path + "/import.log")
        defer { importing.stop() }
        _ = try await BlockingPool.run {
            try importing.waitForOutput(matching: "warning: no `cairn worker` has beaten on this queue", timeout: 120)
        }
        let server = try ServiceProcess(CairnBinary.path, ["serve", "--library", shared, "--listen", "127.0.0.1:0", "--queue", url],
                                        logPath: folder.path + "/serve.log")
        defer { server.stop() }
        let base = "http://127.0.0.1:" + (try await BlockingPool.run {
            try server.waitForOutput(matching: "on http://127\\.0\\.0\\.1:([0-9]+)/")
        })

        let artifacts = OperationsTests.artifact("")
        let waiting = folder.path + "/page-saw-waiting"
        let probe = try ServiceProcess(LivePageTests.python, [LivePageTests.script("live-queue-probe"), base, artifacts,
                                                              "--waiting-file", waiting, "--done", "9"],
                                       logPath: folder.path + "/probe.log")
        defer { probe.stop() }
        let deadline = Date().addingTimeInterval(240)
        while !FileManager.default.fileExists(atPath: waiting), probe.process.isRunning, Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(FileManager.default.fileExists(atPath: waiting), "the page showed jobs waiting: \(probe.output)")
        let worker = try ServiceProcess(CairnBinary.path, ["worker", "--queue", url, "--library", shared, "--lanes", "1"],
                                        logPath: folder.path + "/worker.log")
        _ = try await BlockingPool.run { try worker.waitForOutput(matching: "lanes, queue") }
        #expect(try await BlockingPool.run { try probe.waitForExit(timeout: 300) } == 0, "\(probe.output)")
        try await BlockingPool.run { importing.process.waitUntilExit() }
        #expect(importing.process.terminationStatus == 0, "\(importing.output)")

        let output = probe.output
        let json = try #require(output.range(of: "{\"waiting\"").map { String(output[$0.lowerBound...]) }, "\(output)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        func state(_ key: String) -> [String: Any] { seen[key] as? [String: Any] ?? [:] }
        #expect((state("waiting")["counts"] as? String)?.contains("no worker") == true, "\(state("waiting"))")
        let rows = (state("worker")["workers"] as? [String]) ?? []
        #expect(rows.contains { $0.contains("pid \(worker.pid)") && $0.contains("lease") }, "the worker with its leases: \(rows)")
        #expect((state("done")["counts"] as? String)?.contains("done 9") == true, "\(state("done"))")
        #expect((seen["reloads"] as? [String]) == ["loaded once", "loaded once", "loaded once"], "the page never reloaded")

        kill(worker.pid, SIGTERM)
        try await BlockingPool.run { worker.process.waitUntilExit() }
        let page = try await BlockingPool.run { try HTTPProbe.get(base + "/queue.json") }
        let status = try await BlockingPool.run { try CairnBinary.run(["queue", "status", "--json"], environment: ["CAIRN_QUEUE": url]) }
        let fields = { (text: String) -> [String: Int] in
            let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
            return ["waiting", "running", "done", "failed"].reduce(into: [:]) { $0[$1] = object[$1] as? Int }
        }
        #expect(page.status == 200 && fields(page.body) == fields(status.standardOutput) && fields(page.body)["done"] == 9,
                "\(page.body) against \(status.standardOutput)")
        // Without JavaScript, the page says the same.
        let rendered = try await BlockingPool.run { try HTTPProbe.get(base + "/") }
        #expect(rendered.body.contains("id=\"queue-counts\">waiting 0 · running 0 · done 9"), "\(rendered.body)")
    }

    @Test func aSyncWithAQueueRunsItsJobsThroughItAndCataloguesWhatAPlainSyncDoes() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-shared-sync")
        let source = try Self.source(in: folder, stills: 3, width: 1200, height: 900)
        let plain = folder.path + "/plain", shared = folder.path + "/shared"
        let reference = try CairnBinary.run(["sync", source, "--library", plain, "--plain"])
        #expect(reference.status == 0, "\(reference.standardError)")
        let synced = try CairnBinary.run(["sync", source, "--library", shared, "--plain", "--queue", url, "--work-lanes", "1"])
        #expect(synced.status == 0, "\(synced.standardError)")
        let made = try await Self.derived(shared)
        let expected = try await Self.derived(plain)
        #expect(!made.isEmpty && made == expected, "\(made)")
        // Three thumbnail jobs (each with its preview) and three clips, all through the queue.
        let status = try CairnBinary.run(["queue", "status", "--json"], environment: ["CAIRN_QUEUE": url])
        #expect(status.standardOutput.contains("\"done\":6") && status.standardOutput.contains("\"waiting\":0"),
                "\(status.standardOutput)")
        // A dry run queues nothing, and --work-lanes alone is refused.
        let dry = try CairnBinary.run(["dry-run", source, "--library", shared], environment: ["CAIRN_QUEUE": url])
        #expect(dry.status == 0, "\(dry.standardError)")
        let refused = try CairnBinary.run(["sync", source, "--library", shared, "--work-lanes", "1"])
        #expect(refused.status == 64 && refused.standardError.contains("--work-lanes needs --queue"), "\(refused.standardError)")
    }

    @Test func anImportStoppedWhileItsJobsWaitedTakesTheirResultsNextTimeAndRedoesOnlyWhatIsGone() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-shared-resume")
        let source = try Self.source(in: folder, stills: 3, width: 1400, height: 1000)
        let plain = folder.path + "/plain", shared = folder.path + "/shared"
        // The processes are waited for on the blocking pool: a test holding a cooperative thread would starve the
        // heart-beating workers of the suites running beside it.
        let reference = try await BlockingPool.run { try CairnBinary.run(["import", source, "--library", plain, "--plain"]) }
        #expect(reference.status == 0, "\(reference.standardError)")

        // No worker: the import queues its three thumbnails and waits; it is stopped there.
        let importing = try ServiceProcess(CairnBinary.path, ["import", source, "--library", shared, "--plain", "--queue", url,
                                                              "--work-lanes", "0"], logPath: folder.path + "/import.log")
        #expect(try await waitUntil { $0.waiting == 3 }, "\(importing.output)")
        kill(importing.pid, SIGINT)
        try await BlockingPool.run { importing.process.waitUntilExit() }
        #expect(importing.process.terminationStatus == 130, "\(importing.output)")

        // A worker does them meanwhile; one thumbnail it made is then lost.
        let worker = try ServiceProcess(CairnBinary.path, ["worker", "--queue", url, "--library", shared, "--lanes", "1"],
                                        logPath: folder.path + "/worker.log")
        #expect(try await waitUntil { $0.done == 3 }, "\(worker.output)")
        kill(worker.pid, SIGTERM)
        try await BlockingPool.run { worker.process.waitUntilExit() }
        let thumbnails = try FileManager.default.subpathsOfDirectory(atPath: shared).filter { $0.contains("-thumb.") }
        try #require(thumbnails.count == 3, "\(thumbnails)")
        try FileManager.default.removeItem(atPath: shared + "/" + thumbnails[0])

        // The next import takes the two done jobs whose files are there as they are, queues the lost one's anew,
        // and ends as a plain import does.
        let resumed = try await BlockingPool.run { [url] in
            try CairnBinary.run(["import", source, "--library", shared, "--plain", "--queue", url, "--work-lanes", "1"])
        }
        #expect(resumed.status == 0, "\(resumed.standardError)")
        let perKind = try TestPostgres.psql("SELECT kind || '=' || count(*) FROM cairn_job GROUP BY kind ORDER BY kind",
                                            database: location.database)
        let table = try TestPostgres.psql("SELECT id, kind, state, payload, result FROM cairn_job ORDER BY id", database: location.database)
        #expect(perKind == "clip=3\nthumbnail=4", "\(table)")
        #expect(FileManager.default.fileExists(atPath: shared + "/" + thumbnails[0]))
        let made = try await Self.derived(shared), expected = try await Self.derived(plain)
        #expect(!made.isEmpty && made == expected, "\(made)")
    }

    @Test func anImportThatDoesNotWaitLeavesItsJobsToWorkersAndTheNextRunRecordsThem() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-shared-nowait")
        let source = try Self.source(in: folder, stills: 2, width: 1200, height: 900, video: true)
        let plain = folder.path + "/plain", shared = folder.path + "/shared"
        let reference = try await BlockingPool.run { try CairnBinary.run(["import", source, "--library", plain, "--plain"]) }
        #expect(reference.status == 0, "\(reference.standardError)")

        // No worker anywhere: the import copies, probes, queues each file's thumbnail (and each still's clip with
        // it) and ends at once, its originals archived for now.
        let first = try await BlockingPool.run { [url] in
            try CairnBinary.run(["import", source, "--library", shared, "--queue", url, "--no-wait"])
        }
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("archived     3 originals only (--no-wait"), "\(first.standardOutput)")
        #expect(try await Self.derived(shared).isEmpty)
        var status = try await PostgresWorkQueue.withQueue(at: location) { try await $0.status() }
        #expect(status.waiting == 5, "\(status)")

        // A run that does not wait again before the workers are done changes nothing and queues nothing more.
        let again = try await BlockingPool.run { [url] in
            try CairnBinary.run(["import", source, "--library", shared, "--queue", url, "--no-wait"])
        }
        #expect(again.status == 0 && again.standardOutput.contains("archived     3"), "\(again.standardOutput)")

        let worker = try ServiceProcess(CairnBinary.path, ["worker", "--queue", url, "--library", shared, "--lanes", "2"],
                                        logPath: folder.path + "/worker.log")
        #expect(try await waitUntil { $0.done == 5 }, "\(worker.output)")
        kill(worker.pid, SIGTERM)
        try await BlockingPool.run { worker.process.waitUntilExit() }

        // The next run, which does not wait either, finds every job done and records what the workers made.
        let last = try await BlockingPool.run { [url] in
            try CairnBinary.run(["import", source, "--library", shared, "--queue", url, "--no-wait"])
        }
        #expect(last.status == 0 && !last.standardOutput.contains("archived"), "\(last.standardOutput)")
        let made = try await Self.derived(shared), expected = try await Self.derived(plain)
        #expect(!made.isEmpty && made == expected, "\(made)")
        status = try await PostgresWorkQueue.withQueue(at: location) { try await $0.status() }
        #expect(status.done == 5 && status.waiting == 0, "\(status)")

        let refused = try await BlockingPool.run { [url] in
            try CairnBinary.run(["import", source, "--library", shared, "--queue", url, "--no-wait", "--work-lanes", "1"])
        }
        #expect(refused.status == 64 && refused.standardError.contains("drop --work-lanes"), "\(refused.standardError)")
    }

    @Test func theLibrarysCairnTomlNamesTheQueueForImportWorkerStatusAndConfig() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-shared-toml")
        let source = try Self.source(in: folder, stills: 2, width: 1000, height: 800), shared = folder.path + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        let toml = shared + "/cairn.toml"
        try "queue = \"\(url)\"\nclips = false\n".write(toFile: toml, atomically: true, encoding: .utf8)

        // No --queue and no $CAIRN_QUEUE: the file names the queue, so --work-lanes is accepted and the jobs go there.
        let imported = try await BlockingPool.run { try CairnBinary.run(["import", source, "--library", shared, "--plain", "--work-lanes", "1"]) }
        #expect(imported.status == 0, "\(imported.standardError)")
        let status = try await BlockingPool.run { try CairnBinary.run(["queue", "status", "--json", "--library", shared]) }
        #expect(status.status == 0 && status.standardOutput.contains("\"done\":2"), "\(status.standardOutput)\(status.standardError)")
        let config = try await BlockingPool.run { try CairnBinary.run(["config", "--library", shared]) }
        #expect(config.standardOutput.contains("queue             postgres"), "\(config.standardOutput)")

        // A sync's --config names it too (its own file, not the library's).
        let elsewhere = folder.path + "/etc-cairn.toml", other = folder.path + "/other"
        try "queue = \"\(url)\"\nclips = false\n".write(toFile: elsewhere, atomically: true, encoding: .utf8)
        let synced = try await BlockingPool.run {
            try CairnBinary.run(["sync", source, "--library", other, "--config", elsewhere, "--plain", "--work-lanes", "1"])
        }
        #expect(synced.status == 0, "\(synced.standardError)")
        let after = try await PostgresWorkQueue.withQueue(at: location) { try await $0.status() }
        #expect(after.done == 4, "\(after)")

        // A password there is never printed; a URL that is none is refused, naming the file and the key.
        try "queue = \"postgres://cairn:hunter2@db.invalid/cairn\"\n".write(toFile: toml, atomically: true, encoding: .utf8)
        let hidden = try await BlockingPool.run { try CairnBinary.run(["config", "--library", shared]) }
        #expect(hidden.status == 0 && !hidden.standardOutput.contains("hunter2") && hidden.standardOutput.contains("db.invalid"),
                "\(hidden.standardOutput)")
        try "queue = \"mysql://db.lan/cairn\"\n".write(toFile: toml, atomically: true, encoding: .utf8)
        let refused = try await BlockingPool.run { try CairnBinary.run(["import", source, "--library", shared]) }
        #expect(refused.status == 64 && refused.standardError.contains("cairn.toml: queue"), "\(refused.standardError)")
    }

    @Test func aWorkerKilledHoldingLeasesLosesThemToAnotherThatFinishesThem() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-rescue")
        let layout = LibraryLayout(root: folder.path + "/library")
        let identity = try LibraryIdentity.ensure({ try FileSystem.makeDirectories(layout.root); return layout }())
        // Eight big stills whose clips take seconds each: the first worker holds all eight when it is killed.
        var work: [QueuedWork] = []
        for index in 0..<8 {
            let checksum = String(format: "%040x", 0xC0DE + index)
            let original = layout.originalRelativePath(Checksum(hex: checksum)!, fileExtension: "jpg")
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: layout.absolute(original)))
            try MediaFixtures.jpeg(at: layout.absolute(original), width: 4000 + 8 * index, height: 3000)
            let job = DerivativeJob(original: original, kind: .photo, name: "IMG_\(index).JPG")
            work.append(QueuedWork(library: identity, checksum: checksum, kind: .clip, payload: job.payload))
        }
        let jobs = try await PostgresWorkQueue.withQueue(at: location) { try await $0.enqueue(work) }

        // The product's lease TTL (15 s) and heartbeat: the rescue printed below is the one users get.
        let first = try ServiceProcess(CairnBinary.path, ["worker", "--queue", url, "--library", layout.root, "--lanes", "8"],
                                       logPath: folder.path + "/first.log")
        let holdsAll = try await waitUntil { $0.workers.contains { $0.leases == 8 } }
        #expect(holdsAll, "\(first.output)")
        let second = try ServiceProcess(CairnBinary.path, ["worker", "--queue", url, "--library", layout.root, "--lanes", "8"],
                                        logPath: folder.path + "/second.log")
        try second.waitForOutput(matching: "lanes, queue")
        kill(first.pid, SIGKILL)
        let killed = ContinuousClock.now
        first.process.waitUntilExit()
        let secondPID = Int(second.pid)
        let taken = try await waitUntil {
            $0.done + ($0.workers.first { $0.pid == secondPID }?.leases ?? 0) == 8 && $0.waiting == 0
        }
        #expect(taken, "\(second.output)")
        print("cairn worker killed holding 8 leases: all 8 taken by the other worker \(ContinuousClock.now - killed) after the kill")
        #expect(try await waitUntil(limit: .seconds(300)) { $0.done == 8 }, "\(second.output)")
        kill(second.pid, SIGTERM)
        second.process.waitUntilExit()
        #expect(second.output.contains("stopped: 8 done"), "\(second.output)")
        // Each job ran twice: once on the killed worker, once after its rescue; its result names a clip on disk.
        let attempts = try TestPostgres.psql("SELECT string_agg(attempts::text, ',') FROM cairn_job", database: location.database)
        #expect(attempts == Array(repeating: "2", count: 8).joined(separator: ","))
        let outcomes = try await PostgresWorkQueue.withQueue(at: location) { try await $0.outcomes(of: jobs) }
        for job in jobs {
            guard case .done(let result) = outcomes[job], let output = DerivativeOutput(result: result),
                  let clip = output.files.first(where: { $0.role == .clip }) else {
                Issue.record("job \(job): \(String(describing: outcomes[job]))")
                continue
            }
            #expect(FileManager.default.fileExists(atPath: layout.absolute(clip.path)))
        }
    }

    /// Waits (up to `limit`) until `condition` holds for the queue's status.
    private func waitUntil(limit: Duration = .seconds(120), _ condition: @escaping @Sendable (QueueStatus) -> Bool) async throws -> Bool {
        try await PostgresWorkQueue.withQueue(at: location) { queue in
            let deadline = ContinuousClock.now + limit
            while ContinuousClock.now < deadline {
                if condition(try await queue.status()) { return true }
                try await Task.sleep(for: .milliseconds(100))
            }
            return false
        }
    }
}

@Suite struct SharedWorkPartsTests {
    @Test func aJobsPayloadAndResultSurviveTheQueueAndBecomeTheCatalogsRows() throws {
        let job = DerivativeJob(original: "originals/ab/abc.jpg", kind: .photo, name: "DCIM/IMG 1.JPG")
        #expect(DerivativeJob(payload: job.payload) == job)
        #expect(DerivativeJob(payload: "not json") == nil)
        let checksum = Checksum(hex: String(repeating: "ab", count: 20))!
        let made = StageRows(derivedFiles: [
            DerivedFileRecord(checksum: checksum, role: .thumbnail, path: "derived/ab/x-thumb.webp", format: "webp", width: 320,
                              height: 240, byteCount: 9000, createdAt: Date()),
            DerivedFileRecord(checksum: checksum, role: .clip, path: "derived/ab/x-clip.mp4", format: "h264", width: 1280,
                              height: 720, byteCount: 90000, durationSeconds: 3, createdAt: Date()),
        ])
        let output = try #require(DerivativeOutput(result: DerivativeOutput(made).result))
        let rows = output.rows(for: checksum)
        #expect(rows.derivedFiles.map(\.path) == made.derivedFiles.map(\.path))
        #expect(rows.derivedFiles.map(\.durationSeconds) == [nil, 3])
        let kept = DerivativeOutput(StageRows(keptWithoutPreview: [(checksum, "no decoder for this RAW")]))
        #expect(DerivativeOutput(result: kept.result)?.rows(for: checksum).keptWithoutPreview.first?.reason == "no decoder for this RAW")
    }

    @Test func queuedLanesWaitForJobsWithoutTakingTheDecodersOrTheMemoryBudget() throws {
        var configuration = PipelineConfiguration.defaults(cores: 2)
        #expect(configuration.decoders == 2)
        SharedQueueLanes.apply(to: &configuration)
        // A phase of these lanes waits for a worker's job: bounded by the decoders, 32 would wait as 2.
        #expect(configuration.decoders == nil)
        #expect(configuration.thumbnail.width == SharedQueueLanes.width)
        #expect(!configuration.thumbnail.holdsMemory && !configuration.synthesis.holdsMemory)
        #expect(configuration.transfer.holdsMemory && configuration.metadata.holdsMemory, "the import still probes")
        let given = try configuration.applying(laneSpec: "decoders=3")
        #expect(given.decoders == 3, "--lanes still has the last word")
    }

    @Test func aLibrarysIdentityIsMadeOnceAndAFolderWithoutOneHasNone() throws {
        let folder = try TemporaryDirectory(prefix: "cairn-identity")
        let layout = LibraryLayout(root: folder.path)
        #expect(LibraryIdentity.read(layout) == nil)
        let identity = try LibraryIdentity.ensure(layout)
        #expect(try LibraryIdentity.ensure(layout) == identity)
        #expect(LibraryIdentity.read(layout) == identity)
        // Something else at that name is neither replaced nor taken for an identity.
        try Data("not a uuid\n".utf8).write(to: URL(fileURLWithPath: layout.identityPath))
        #expect(throws: LibraryIdentityError.self) { try LibraryIdentity.ensure(layout) }
        #expect(try String(contentsOfFile: layout.identityPath, encoding: .utf8) == "not a uuid\n")
    }
}
