import CairnCore
import CairnLibrary
import CairnPipeline
import CairnQueue
import CairnStages
import CairnStore
import Foundation

/// An import's part in a shared queue, for as long as the import runs: the queue's connections, the waiter for
/// the jobs it queues, and (with `lanes` above 0) a worker of its own that takes part in the library's work.
package enum SharedImport {
    /// Runs `body` with the destination whose stages queue the derivative work, holding the library's lock in the
    /// queue's PostgreSQL (`LibraryRunLock`: one import of a library at a time over every host that mounts it). A
    /// queue that cannot be reached, or a library whose identity cannot be recorded, throws `SharedWorkError`
    /// before `body` runs, and a lock another host's run holds `LibraryLockedError`; what `body` throws comes
    /// through unchanged, unless the lock was lost to another run meanwhile (`LibraryLockedError`, `lost`).
    /// `command` names the run to other hosts (`cairn sync (pid N on HOST)`); `warn` hears of a queue whose jobs
    /// nobody would run; `lockLost` that the run must stop, and who took the lock. `waits` false (`--no-wait`): the
    /// stages leave work not yet done to the workers.
    package static func run<Value: Sendable>(
        queue location: PostgresLocation, libraryRoot: String, store: (any ObjectStore)? = nil, lanes: Int,
        waits: Bool = true, command: String = "import",
        warn: @Sendable (String) -> Void = { _ in },
        lockLost: @escaping @Sendable (String) -> Void = { _ in },
        _ body: (any ImportDestination) async throws -> Value
    ) async throws -> Value {
        let layout = LibraryLayout(root: libraryRoot)
        let identity = try await SharedImport.identity(of: layout, libraryRoot: libraryRoot, store: store)
        let outcome: Result<Value, any Error>
        let takenBy = Locked<String?>(nil)
        let holder = "cairn \(command) (pid \(getpid()) on \(ProcessInfo.processInfo.hostName))"
        do {
            outcome = try await PostgresWorkQueue.withQueue(at: location) { queue in
                try await LibraryRunLock.holding(library: identity, at: location, holder: holder,
                                                 onLost: { other in takenBy.withLock { $0 = other }; lockLost(other) }) {
                    await warnIfNoWorker(queue, lanes: lanes, waits: waits, command: command, warn: warn)
                    return await withPart(in: queue, layout: layout, store: store, identity: identity, lanes: lanes,
                                          waits: waits, body)
                }
            }
        } catch let held as LibraryRunLockError {
            throw LibraryLockedError(libraryRoot: libraryRoot, heldElsewhereBy: held.description)
        } catch {
            throw SharedWorkError("the queue at \(location): \(WorkQueueError.describe(error))")
        }
        if let other = takenBy.withLock({ $0 }) {
            throw LibraryLockedError(libraryRoot: libraryRoot, heldElsewhereBy: other, lost: true)
        }
        return try outcome.get()
    }

    /// As `run`, for a run that already holds the library's lock and has recorded its identity: its catalog is in
    /// PostgreSQL (`SharedCatalog.run`). A queue that cannot be reached throws `SharedWorkError`.
    package static func takingPart<Value: Sendable>(
        queue location: PostgresLocation, layout: LibraryLayout, store: (any ObjectStore)? = nil, identity: String,
        lanes: Int, waits: Bool = true, command: String, warn: @Sendable (String) -> Void = { _ in },
        _ body: (any ImportDestination) async throws -> Value
    ) async throws -> Value {
        let outcome: Result<Value, any Error>
        do {
            outcome = try await PostgresWorkQueue.withQueue(at: location) { queue in
                await warnIfNoWorker(queue, lanes: lanes, waits: waits, command: command, warn: warn)
                return await withPart(in: queue, layout: layout, store: store, identity: identity, lanes: lanes,
                                      waits: waits, body)
            }
        } catch {
            throw SharedWorkError("the queue at \(location): \(WorkQueueError.describe(error))")
        }
        return try outcome.get()
    }

    /// The library's identity in the queue, made (in its folder, and in its store when it has one) on its first
    /// shared run; a folder or store that cannot hold it throws `SharedWorkError` naming the folder.
    static func identity(of layout: LibraryLayout, libraryRoot: String, store: (any ObjectStore)?) async throws -> String {
        do {
            try FileSystem.makeDirectories(libraryRoot)
            if let store { return try await LibraryIdentity.ensure(layout, store: store) }
            return try LibraryIdentity.ensure(layout)
        } catch { throw SharedWorkError("\(libraryRoot): \(error)") }
    }

    /// A run that leaves all its jobs to workers says so when no worker is alive to take them.
    private static func warnIfNoWorker(_ queue: PostgresWorkQueue, lanes: Int, waits: Bool, command: String,
                                       warn: @Sendable (String) -> Void) async {
        guard lanes == 0, let workers = try? await queue.status().workers,
              !workers.contains(where: { $0.silentFor < aliveWithin }) else { return }
        warn("no `cairn worker` has beaten on this queue in the last \(Int(aliveWithin)) s, and this "
             + "\(command) runs none of its jobs (\(waits ? "--work-lanes 0" : "--no-wait")): its thumbnails and "
             + "clips wait for a worker")
    }

    /// A worker silent for longer than the default lease is taken for dead.
    static let aliveWithin = 15.0

    private static func withPart<Value: Sendable>(
        in queue: PostgresWorkQueue, layout: LibraryLayout, store: (any ObjectStore)?, identity: String, lanes: Int,
        waits: Bool,
        _ body: (any ImportDestination) async throws -> Value
    ) async -> Result<Value, any Error> {
        let waiter = JobWaiter(queue: queue)
        let waiting = Task { await waiter.run() }
        var settings = QueueWorker.Settings()
        settings.lanes = max(lanes, 1)
        settings.library = identity
        // The import gives work in flight at a stop 5 s: its worker's drain is no longer.
        settings.drainTimeout = .seconds(5)
        // With a store, this process's jobs read originals from it as any worker's do, and find the import's own
        // copies in the folder while they are there.
        let jobs = DerivativeJobs(layout: layout, store: store)
        let worker = lanes > 0 ? QueueWorker(queue: queue, settings: settings) { try await jobs.run($0) } : nil
        let working = worker.map { worker in Task { try await worker.run() } }
        // The library's own destination in every respect but the stages, whose derivative phases are queued.
        var destination = LibraryDestination(store: store, folderRoot: layout.root)
        let enqueuer = EnqueueBatcher(queue: queue)
        destination.queued = { local, run in
            QueuedStages(local: local, enqueuer: enqueuer, waiter: waiter, library: identity, layout: run.library.layout,
                         store: store, route: run.route, onKeptWithoutPreview: run.onKeptWithoutPreview, waits: waits,
                         clipsEnabled: run.clipsEnabled)
        }
        let outcome: Result<Value, any Error>
        do { outcome = .success(try await body(destination)) } catch { outcome = .failure(error) }
        worker?.stop()
        _ = try? await working?.value
        waiting.cancel()
        await waiting.value
        return outcome
    }
}
