import Foundation

// What the shared queue tells of itself, as values: here so that the commands that show them compile in a build
// without PostgreSQL too (which refuses them).

/// The queue at a glance (`cairn queue status`).
public struct QueueStatus: Sendable, Equatable {
    public struct Worker: Sendable, Equatable {
        public var id: UUID
        public var host: String
        public var pid: Int
        public var leases: Int
        /// Seconds since its last heartbeat.
        public var silentFor: Double

        public init(id: UUID, host: String, pid: Int, leases: Int, silentFor: Double) {
            self.id = id; self.host = host; self.pid = pid; self.leases = leases; self.silentFor = silentFor
        }
    }

    public var waiting = 0
    public var running = 0
    public var done = 0
    public var failed = 0
    /// Seconds the oldest waiting job has waited; nil with none waiting.
    public var oldestWaitingAge: Double?
    public var workers: [Worker] = []

    /// An import holding its library's lock in this database (`LibraryRunLock`).
    public struct Import: Sendable, Equatable {
        /// The import as it names itself: `cairn import (pid N on HOST)`.
        public var holder: String
        /// The address its lock's connection comes from, or `a local socket`.
        public var from: String
        /// Seconds its lock's connection has held it (since the import began, or since its last reconnect).
        public var heldFor: Double

        public init(holder: String, from: String, heldFor: Double) {
            self.holder = holder; self.from = from; self.heldFor = heldFor
        }
    }

    public var imports: [Import] = []

    public init() {}

    /// The status as one JSON object: `cairn queue status --json` and `cairn serve`'s `/queue.json` alike.
    public var json: String {
        struct Worker: Encodable { var id: String; var host: String; var pid: Int; var leases: Int; var silentSeconds: Double }
        struct Held: Encodable { var holder: String; var from: String; var heldSeconds: Double }
        struct Document: Encodable {
            var waiting, running, done, failed: Int
            var oldestWaitingSeconds: Double?
            var workers: [Worker]
            var imports: [Held]
        }
        let document = Document(
            waiting: waiting, running: running, done: done, failed: failed, oldestWaitingSeconds: oldestWaitingAge,
            workers: workers.map { Worker(id: $0.id.uuidString.lowercased(), host: $0.host, pid: $0.pid,
                                          leases: $0.leases, silentSeconds: $0.silentFor) },
            imports: imports.map { Held(holder: $0.holder, from: $0.from, heldSeconds: $0.heldFor) })
        return String(decoding: (try? Timestamp.jsonEncoder().encode(document)) ?? Data(), as: UTF8.self)
    }
}

/// What a queue worker did, for its last line and tests.
public struct QueueWorkerReport: Sendable, Equatable {
    public var completed = 0
    public var failed = 0
    /// Jobs whose lease was lost while they ran (their results dropped).
    public var lost = 0
    /// Leases given back at a stop.
    public var released = 0

    public init() {}
}

/// What a queue worker tells of its server: once when a call fails (and it starts trying again), once when a call
/// works again; not at every failed try of an outage.
public enum QueueServerEvent: Sendable, Equatable {
    case lost(reason: String)
    case back
}
