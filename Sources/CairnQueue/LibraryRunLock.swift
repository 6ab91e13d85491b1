import CairnCore
import Foundation
import Logging
import PostgresNIO

/// A library's single-writer hold across hosts: a session-level PostgreSQL advisory lock keyed by the library's
/// identity, held on a connection of its own for as long as an import runs. The library's `flock` guards one
/// host; two hosts that mount the library over NFS may not see each other's `flock`, and both see this. Workers
/// never take it.
///
/// A session lock ends with its connection: once the connection is closed the lock is taken again on a new one
/// (backing off while the server is away). Should another run have taken it meanwhile, `onLost` hears who holds
/// it, once, and the caller stops its run. A connection left half open (a host gone without a word) holds the lock
/// until the server's TCP keepalive ends it.
public enum LibraryRunLock {
    /// Runs `body` holding the lock of `library` (an identity) at `location`; `holder` is what another contender
    /// reads about this run (PostgreSQL's `application_name`). Throws `LibraryRunLockError.held` without running
    /// `body` when another session holds it.
    public static func holding<Value: Sendable>(
        library: String, at location: PostgresLocation, holder: String,
        onLost: @escaping @Sendable (String) -> Void, _ body: () async throws -> Value
    ) async throws -> Value {
        let key = LockKey(library: library)
        let session = LockSession(location: location, holder: holder, key: key)
        let first = try await session.connect()
        guard try await session.take(on: first) else {
            let holder = await session.holder(on: first)
            try? await first.close()
            throw LibraryRunLockError.held(by: holder.description)
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            let held = Locked(HeldLock(connection: first))
            group.addTask { await session.keep(held, onLost: onLost) }
            let outcome: Result<Value, any Error>
            do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            let connection = held.withLock { state in
                state.ended = true
                defer { state.connection = nil }
                return state.connection
            }
            group.cancelAll()
            if let connection {
                // Bounded: a query on a connection the server has just closed never returns, and the run's end
                // must not wait for it (closing the connection lets the lock go anyway).
                let logger = session.logger
                _ = try? await withTimeLimit(.seconds(5), "letting the library's lock go") {
                    try await connection.query("SELECT pg_advisory_unlock(\(key.value))", logger: logger)
                }
                try? await connection.close()
            }
            try? await group.waitForAll()
            return try outcome.get()
        }
    }
}

extension LibraryRunLock {
    /// The imports holding a library's lock in the database `client` reaches, longest held first.
    static func holders(_ client: PostgresClient, logger: Logger) async throws -> [QueueStatus.Import] {
        var imports: [QueueStatus.Import] = []
        for try await (holder, from, heldFor) in try await client.query("""
            SELECT a.application_name, COALESCE(host(a.client_addr), 'a local socket'),
              extract(epoch FROM now() - a.backend_start)::float8
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND a.application_name LIKE 'cairn %'
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            ORDER BY a.backend_start
            """, logger: logger).decode((String, String, Double).self) {
            imports.append(.init(holder: holder, from: from, heldFor: heldFor))
        }
        return imports
    }
}

public enum LibraryRunLockError: Error, CustomStringConvertible, Equatable {
    /// Another session holds the library's lock: who, as PostgreSQL knows it.
    case held(by: String)

    public var description: String {
        switch self {
        case .held(let holder): "held in PostgreSQL by \(holder)"
        }
    }
}

/// The lock's 64-bit key: FNV-1a of the library's identity, kept positive so it reads the same in `pg_locks`.
struct LockKey: Sendable {
    let value: Int64

    init(library: String) {
        value = Int64(bitPattern: FNV1a64.hash(("cairn library " + library).utf8) & UInt64(Int64.max))
    }

    /// `pg_locks` shows a bigint key as its high and low 32 bits.
    var high: Int64 { value >> 32 }
    var low: Int64 { value & 0xffff_ffff }
}

private struct LockSession: Sendable {
    let location: PostgresLocation
    let holder: String
    let key: LockKey
    let logger = Logger(label: "cairn.library-lock", factory: { _ in SwiftLogNoOpLogHandler() })

    func connect() async throws -> PostgresConnection {
        var configuration = location.connectionConfiguration()
        // PostgreSQL keeps 63 bytes of it.
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    }

    func take(on connection: PostgresConnection) async throws -> Bool {
        for try await taken in try await connection.query("SELECT pg_try_advisory_lock(\(key.value))", logger: logger)
            .decode(Bool.self) { return taken }
        return false
    }

    /// Who holds the lock: their `application_name` (nil when none could be read), and it with where they connect
    /// from and since when.
    func holder(on connection: PostgresConnection) async -> (name: String?, description: String) {
        let rows = try? await connection.query("""
            SELECT a.application_name, COALESCE(host(a.client_addr), 'a local socket'), a.backend_start
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
              AND l.classid::bigint = \(key.high) AND l.objid::bigint = \(key.low)
            """, logger: logger).decode((String, String, Date).self)
        do {
            if let rows {
                for try await (name, address, since) in rows {
                    let who = name.isEmpty ? "another session" : name
                    return (name, "\(who), connected from \(address) since \(Timestamp.toTheSecond(since))")
                }
            }
        } catch {}
        return (nil, "another session")
    }

    /// This run's name as PostgreSQL keeps it.
    var applicationName: String { String(holder.utf8.prefix(63)) ?? "cairn" }

    /// Waits for the lock's connection to end (the server restarted, `pg_terminate_backend`, the network), then takes
    /// the lock again on a new one, backing off while the server is away; until `held` is ended.
    func keep(_ held: Locked<HeldLock>, onLost: @Sendable (String) -> Void) async {
        var backoff = Duration.milliseconds(250)
        while true {
            guard let connection = held.withLock({ $0.ended ? nil : $0.connection }) else { break }
            // A query on a connection the server closed never returns: the close itself is what is waited for.
            try? await connection.closeFuture.get()
            held.withLock { if $0.connection === connection { $0.connection = nil } }
            while !held.withLock({ $0.ended }) {
                var fresh: PostgresConnection?
                do {
                    let connection = try await connect()
                    fresh = connection
                    guard try await take(on: connection) else {
                        let other = await holder(on: connection)
                        // This run's own last session, not yet ended on the server's side (it has not seen the
                        // connection go): it lets go when it does.
                        guard other.name == applicationName else {
                            onLost(other.description)
                            try? await connection.close()
                            return
                        }
                        throw LibraryRunLockError.held(by: other.description)
                    }
                    let recorded = held.withLock { state -> Bool in
                        guard !state.ended else { return false }
                        state.connection = connection
                        return true
                    }
                    if recorded {
                        backoff = .milliseconds(250)
                        break
                    }
                    // The run ended meanwhile: this connection's lock is let go with it.
                    try? await connection.close()
                    return
                } catch {
                    try? await fresh?.close()
                    try? await Task.sleep(for: backoff)
                    backoff = min(backoff * 2, .seconds(4))
                }
            }
        }
    }
}

/// The lock's connection, and whether the run it guards has ended (then nothing takes the lock again).
struct HeldLock: Sendable {
    var connection: PostgresConnection?
    var ended = false
}
