import CairnCore
import CairnLibrary
import CairnStore
#if SharedQueue
import CairnQueue
import CairnSharedWork
#endif
import Foundation

/// The shared queue's own work below the command line: a worker's loop (`cairn worker`) and the queue's state
/// (`cairn queue status`). A build without PostgreSQL has the same calls and refuses them.
public enum SharedQueueService {
    /// What `cairn worker` asks for.
    public struct WorkerRequest: Sendable {
        public var queue: PostgresLocation
        /// The library folder the queued jobs write into (at whatever path this host mounts it); with `store`,
        /// only the worker's scratch space.
        public var libraryRoot: String
        /// The store the library's files are in: the jobs read and write there, and the library's identity is
        /// found there, not in the folder.
        public var store: (any ObjectStore)?
        /// With `store`: the folder is this worker's alone (scratch, not a library), so a copy read from the store
        /// leaves it when its jobs end.
        public var ownsFolder = false
        public var lanes: Int
        public var drainTimeout: Duration
        public var leaseTTL: Duration
        /// `--job-log`: a JSON line per job start and end.
        public var jobLogPath: String?
        /// What the jobs' decodes and encodes may hold at once, by their estimates.
        public var memory: MemoryBudget?

        public init(queue: PostgresLocation, libraryRoot: String, lanes: Int, drainTimeout: Duration,
                    leaseTTL: Duration, jobLogPath: String?, memory: MemoryBudget? = nil) {
            self.queue = queue; self.libraryRoot = libraryRoot; self.lanes = lanes
            self.drainTimeout = drainTimeout; self.leaseTTL = leaseTTL; self.jobLogPath = jobLogPath
            self.memory = memory
        }
    }

    /// A worker that has started: its id, and the stop a signal asks for (no new claims; running jobs drain).
    public struct RunningWorker: Sendable {
        public let id: UUID
        public let stop: @Sendable () -> Void
    }

    /// Runs a worker until it is stopped. `started` hears it once, before its first claim; `onServer` hears the
    /// queue's server go and come back. Throws `RunAccessError` for what stops it from starting or going on: no
    /// shared library in the folder (an unmounted disk), a job log that cannot be opened, a queue that cannot be
    /// reached, a build without PostgreSQL.
    public static func runWorker(_ request: WorkerRequest,
                                 onServer: @escaping @Sendable (QueueServerEvent) -> Void,
                                 started: (RunningWorker) -> Void) async throws -> QueueWorkerReport {
        #if SharedQueue
        let layout = LibraryLayout(root: request.libraryRoot)
        let identity: String
        if let store = request.store {
            let named: String?
            do { named = try await LibraryIdentity.read(from: store) } catch { throw RunAccessError("\(error)") }
            guard let named else {
                throw RunAccessError("\(store.description): no shared library there (no \(LibraryIdentity.storeKey)); "
                                     + "a library joins a queue with its first `cairn import --queue --store`.")
            }
            identity = named
        } else {
            guard let named = LibraryIdentity.read(layout) else {
                throw RunAccessError("\(layout.root): no shared library here (no \(LibraryLayout.identityFileName)); is "
                                     + "the disk mounted? A library joins a queue with its first `cairn import --queue`.")
            }
            identity = named
        }
        var settings = QueueWorker.Settings()
        settings.lanes = request.lanes
        settings.library = identity
        settings.drainTimeout = request.drainTimeout
        settings.leaseTTL = request.leaseTTL
        let jobs = DerivativeJobs(layout: layout, store: request.store, ownsFolder: request.ownsFolder,
                                  memory: request.memory)
        let id = UUID()
        let log: JobLog?
        do { log = try request.jobLogPath.map { path throws(SystemCallError) in try JobLog(path: path, worker: id) } } catch {
            throw RunAccessError("--job-log: \(error)")
        }
        do {
            return try await PostgresWorkQueue.withQueue(at: request.queue) { queue in
                let worker = QueueWorker(queue: queue, settings: settings, id: id, onServer: onServer) { lease in
                    guard let log else { return try await jobs.run(lease) }
                    return try await log.record(lease) { try await jobs.run(lease) }
                }
                started(RunningWorker(id: worker.id, stop: { worker.stop() }))
                return try await worker.run()
            }
        } catch {
            throw RunAccessError("\(request.queue): \(WorkQueueError.describe(error))")
        }
        #else
        throw RunAssembly.noPostgres
        #endif
    }

    /// The queue's state: jobs by state, workers and their leases, imports holding their library's lock.
    public static func status(at location: PostgresLocation) async throws -> QueueStatus {
        #if SharedQueue
        do { return try await PostgresWorkQueue.withQueue(at: location) { try await $0.status() } } catch {
            throw RunAccessError("\(location): \(WorkQueueError.describe(error))")
        }
        #else
        throw RunAssembly.noPostgres
        #endif
    }
}
