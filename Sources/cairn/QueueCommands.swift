import ArgumentParser
import CairnCore
import CairnLibrary
import CairnStages
import CairnRun
import CairnS3
import Foundation

/// `cairn worker`: claims a library's queued thumbnails and clips until stopped.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Make thumbnails and clips for a library's imports from a shared queue, until stopped.",
        discussion: """
            An import run with --queue URL queues the thumbnail and clip of each new file in PostgreSQL instead \
            of making them itself; any number of workers, on this host or others that mount the same library \
            folder (at any path), claim them in batches, write the files into the library and hand the results \
            back to the import, which records them in its catalog. The catalog is never opened here: the \
            library folder may be on NFS.

            Each claim is a lease that this worker's heartbeat (every 5 s) keeps for --lease-ttl; the jobs of a \
            worker that dies are taken back by the others once its leases expire, and a worker that lost a \
            lease has its result dropped (the files are addressed by content, so nothing is written twice \
            differently). A job whose media is damaged fails at once with its reason; one that fails otherwise \
            runs again after a pause, three tries in all. Each job waits until --memory has room for its estimate \
            (from a probe of the original, as an import's); one larger than the cgroup allows fails with its \
            memory reason. Jobs that ended are kept 7 days (for `cairn queue \
            status`, and for an import resumed after its jobs finished), then the workers delete them.

            SIGINT or SIGTERM: no new claims; jobs running get --drain-timeout to finish, then go back to the \
            queue with their tries unchanged. Exit codes: 0 stopped by a signal; 1 the queue could not be \
            reached, the folder holds no library that an import has shared (an unmounted disk), or --job-log \
            cannot be opened; 64 the command line was wrong.

            With --store s3://BUCKET/PREFIX (the store an import with --queue --store put the library's files in), \
            no host needs the library folder: a worker finds the library by the identity its import left in the \
            store, reads each job's original from the store and puts the thumbnail, preview and clip there before \
            the job counts as done. --library then only says where the worker's scratch folder goes (by default \
            $TMPDIR; a folder of its own for each worker, removed when it stops, and by the next worker there if \
            it was killed), where an original stays only while a job reads it; named as \
            the import's own library folder (a worker on the import's host), it reads the import's copies there \
            and leaves them for the import to let go. Endpoint, \
            region and credentials come from the AWS variables and files, as for `cairn import --store`; a store \
            that cannot be reached, or that no import has shared, exits 1.
            """,
        // In a build without PostgreSQL it stays out of --help but still answers, with how to get one that has it.
        shouldDisplay: RunAssembly.hasPostgres)

    @OptionGroup var queue: QueueLocationOption

    @OptionGroup var library: LibraryOption

    @Option(name: .customLong("store"),
            help: "The S3-compatible store (s3://BUCKET/PREFIX) the library's files are in: jobs read and write there, and --library is only scratch space (also $CAIRN_STORE).")
    var storeURL: String?

    @Option(name: .customLong("lanes"), help: "Jobs run at once (default: one per core).")
    var lanes: Int?

    @Option(name: .customLong("drain-timeout"),
            help: "Seconds the jobs running at a stop get to finish before they go back to the queue.")
    var drainSeconds: Double = 30

    @Option(name: .customLong("lease-ttl"),
            help: "Seconds a lease lasts without a heartbeat before any worker may take its job back.")
    var leaseSeconds: Double = 15

    @OptionGroup var memory: MemoryOption

    @Option(name: .customLong("job-log"),
            help: "Appends a JSON line to this file as each job starts and ends (job, lease token, worker, time).")
    var jobLogPath: String?

    func validate() throws {
        if let lanes, lanes < 1 { throw ValidationError("--lanes must be at least 1.") }
        guard drainSeconds >= 0 else { throw ValidationError("--drain-timeout cannot be negative.") }
        // The heartbeat comes every 5 s: a shorter lease would expire between two beats of a live worker.
        guard leaseSeconds >= 6 else { throw ValidationError("--lease-ttl must be at least 6 seconds (heartbeats come every 5 s).") }
        _ = try queue.required(libraryRoot: library.resolvedPath)
        _ = try memory.budget()
        _ = try storeLocation()
    }

    /// The store the flag, `$CAIRN_STORE` or the library folder's record names; nil: the jobs work in the folder.
    private func storeLocation() throws -> S3Location? {
        // Without --library, a store's worker has no folder whose record or cairn.toml could speak.
        if library.path == nil, let url = storeURL ?? ProcessInfo.processInfo.environment["CAIRN_STORE"] {
            do { return try S3Location(parsing: url) } catch { throw ValidationError("\(error)") }
        }
        return try StoreOption.location(flag: storeURL, libraryRoot: library.resolvedPath)
    }

    func run() async throws {
        let location = try queue.required(libraryRoot: library.resolvedPath)
        queue.warnOfExposedPassword()
        let budget = try memory.budget()
        MemoryOption.tune(for: budget)
        let storeLocation = try storeLocation()
        var store: S3Store?
        if let storeLocation { store = try await StoreOption.connect(storeLocation) }
        // A store's worker works in a folder of its own, gone when it stops: under the folder --library names
        // unless that holds a library (the import's, whose copies it reads), else under $TMPDIR. Two workers that
        // name one folder each get their own.
        var scratch: String?
        if store != nil, library.path == nil || !LibraryLayout.holdsLibrary(library.resolvedPath) {
            scratch = try Self.makeScratch(under: library.path == nil ? nil : library.resolvedPath)
        }
        defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }
        let folder = scratch ?? library.resolvedPath
        var request = SharedQueueService.WorkerRequest(
            queue: location, libraryRoot: folder, lanes: lanes ?? System.coreCount,
            drainTimeout: .milliseconds(Int64(drainSeconds * 1000)), leaseTTL: .milliseconds(Int64(leaseSeconds * 1000)),
            jobLogPath: jobLogPath, memory: budget)
        request.store = store
        // A library folder may be the import's, whose copies other processes read.
        request.ownsFolder = scratch != nil
        var signals: SignalHandling?
        defer { signals?.uninstall() }
        do {
            let drain = drainSeconds
            let report = try await SharedQueueService.runWorker(request, onServer: { event in
                switch event {
                case .lost(let reason): Output.error("\(location): \(reason); trying again until it answers")
                case .back: Output.line("\(location): answering again")
                }
            }) { worker in
                signals = SignalHandling.install(cancellation: PipelineCancellation()) { name in
                    Output.error("\(name): no new claims; jobs running get \(drain) s, then go back to the queue")
                    worker.stop()
                }
                let place = storeLocation.map { "\($0) (scratch \(folder))" } ?? folder
                Output.line("worker \(worker.id.uuidString.lowercased()) (pid \(getpid())): \(place), "
                            + "\(request.lanes) lanes, queue \(location), memory \(budget)")
            }
            await store?.close()
            Output.line("stopped: \(report.completed) done, \(report.failed) failed, \(report.lost) lost to other "
                        + "workers, \(report.released) given back")
        } catch {
            await store?.close()
            throw Output.fail("\(error)")
        }
    }
}

extension WorkerCommand {
    static let scratchPrefix = "cairn-worker-"

    /// A new folder for a store's worker under `base` (default $TMPDIR, else /tmp): its originals while read, its
    /// jobs' files until put. The worker holds a lock on it while it lives; scratch folders beside it whose lock
    /// nobody holds (their workers were killed) are removed first.
    static func makeScratch(under base: String?) throws -> String {
        let base = base ?? ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix(scratchPrefix) {
            let folder = base + "/" + name
            guard let lock = lockScratch(folder, creating: false) else { continue }
            try? FileManager.default.removeItem(atPath: folder)
            close(lock)
        }
        var template = Array((base + "/" + scratchPrefix + "XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Output.fail("cannot make a scratch folder under \(base): \(String(cString: strerror(errno)))")
        }
        let folder = String(cString: made)
        // Held (never closed) until the process ends, however it ends.
        guard lockScratch(folder, creating: true) != nil else {
            throw Output.fail("cannot lock the scratch folder \(folder): \(String(cString: strerror(errno)))")
        }
        return folder
    }

    /// The descriptor of `folder`'s lock file, locked; nil when another process holds it (or it cannot be opened).
    private static func lockScratch(_ folder: String, creating: Bool) -> Int32? {
        let flags = O_RDWR | O_CLOEXEC | (creating ? O_CREAT : 0)
        guard case .success(let descriptor) = SystemCall.result({ open(folder + "/.lock", flags, 0o600) }) else { return nil }
        guard case .success = SystemCall.result({ flock(descriptor, LOCK_EX | LOCK_NB) }) else {
            close(descriptor)
            return nil
        }
        return descriptor
    }
}

/// `cairn queue`: the shared queue's state.
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Look at the shared work queue.",
        shouldDisplay: RunAssembly.hasPostgres,
        subcommands: [QueueStatusCommand.self])
}

/// `cairn queue status`: counts by state, the oldest waiting job's age, and each worker's leases and last beat.
struct QueueStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Jobs by state, the oldest waiting job's age, workers with their leases and last heartbeat, imports running.",
        discussion: """
            A worker silent for longer than its lease's TTL (15 s by default) is dead or cut off: its jobs go \
            back to the queue as soon as another worker's heartbeat sees the expiry. An import with --queue holds \
            its library's lock in the queue's database while it runs, and is listed with it. Exit codes: 0 the queue \
            answered; 1 it could not be reached; 64 the command line was wrong.
            """)

    @OptionGroup var queue: QueueLocationOption

    /// Only where the queue is named: the `queue` key of its cairn.toml.
    @OptionGroup var library: LibraryOption

    @Flag(help: "Print the status as one JSON object.")
    var json = false

    func validate() throws { _ = try queue.required(libraryRoot: library.resolvedPath) }

    func run() async throws {
        let location = try queue.required(libraryRoot: library.resolvedPath)
        queue.warnOfExposedPassword()
        let status: QueueStatus
        do { status = try await SharedQueueService.status(at: location) } catch {
            throw Output.fail("\(error)")
        }
        if json {
            Output.line(status.json)
            return
        }
        let oldest = status.oldestWaitingAge.map { String(format: " (oldest %.1f s)", $0) } ?? ""
        Output.line("waiting \(status.waiting)\(oldest) · running \(status.running) · done \(status.done) · failed \(status.failed)")
        if status.workers.isEmpty { Output.line("no workers have registered") }
        for worker in status.workers {
            Output.line(String(format: "worker %@ on %@ (pid %d): %d leases, last heartbeat %.1f s ago",
                               worker.id.uuidString.lowercased(), worker.host, worker.pid, worker.leases, worker.silentFor))
        }
        for running in status.imports {
            Output.line(String(format: "%@ holds its library's lock, from %@, for %.0f s", running.holder, running.from,
                               running.heldFor))
        }
    }
}
