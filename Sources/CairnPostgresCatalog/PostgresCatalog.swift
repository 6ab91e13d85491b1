import CairnCatalog
import CairnCore
import CairnQueue
import Foundation
import Logging
import PostgresNIO

/// A library's catalog in PostgreSQL, for a library that several hosts work on (its folder shared over NFS or the
/// like, where SQLite must not live): the same records as the SQLite catalog, in the schema `cairn` of one
/// database, which belongs to one library. So far it holds sources and their snapshots, the import items and what
/// their stages made, runs, the reconciliation stores, the trash, and what links to assets (`ItemCatalog`,
/// `SnapshotCatalog`, `RunCatalog`, `ReconcileCatalog`, `TrashCatalog`, `AssetLinkCatalog`); a run's own tables
/// (the walk, its checksums and content) and the read side follow behind the same contract suite.
public final class PostgresCatalog: Sendable {
    /// The library this catalog belongs to (its identity, as the queue names it).
    public let library: String
    let client: PostgresClient
    let logger = Logger(label: "cairn.catalog", factory: { _ in SwiftLogNoOpLogHandler() })

    /// How long one try of an operation may take before it is given up and, as a lost connection is, tried again:
    /// postgres-nio's query on a connection the server had just closed was seen never to end. Far above any one
    /// statement's time, so only such a hang meets it.
    let tryTimeLimit: Duration

    init(library: String, client: PostgresClient, tryTimeLimit: Duration = .seconds(120)) {
        self.library = library
        self.client = client
        self.tryTimeLimit = tryTimeLimit
    }

    /// Connects to `location`, brings the schema up to date, checks that the database holds `library`'s catalog
    /// (or none yet: it becomes `library`'s) and runs `body` with it; the connections close when `body` returns.
    public static func withCatalog<Result: Sendable>(at location: PostgresLocation, library: String,
                                                     _ body: (PostgresCatalog) async throws -> Result) async throws -> Result {
        try await connected(to: location, library: library) { catalog in
            try await CatalogSchema.migrations.apply(catalog.client, logger: catalog.logger)
            try await catalog.claim(location: location)
            return try await body(catalog)
        }
    }

    /// Runs `body` with the catalog of `library` at `location`, its pool of connections running until `body` returns.
    private static func connected<Result: Sendable>(to location: PostgresLocation, library: String,
                                                    _ body: (PostgresCatalog) async throws -> Result) async throws -> Result {
        let client = PostgresClient(configuration: location.clientConfiguration())
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(PostgresCatalog(library: library, client: client))
        }
    }

    /// Connects to `location` for a command that only reads (`cairn status`): nothing is migrated or claimed. A
    /// database that holds no catalog, an older schema than this cairn's, or another library's catalog is refused.
    public static func reading<Result: Sendable>(at location: PostgresLocation, library: String,
                                                 _ body: (PostgresCatalog) async throws -> Result) async throws -> Result {
        try await connected(to: location, library: library) { catalog in
            let missing = try await catalog.failing("read its schema's version") {
                try await CatalogSchema.migrations.missing(catalog.client, logger: catalog.logger)
            }
            if missing.count == CatalogSchema.migrations.migrations.count {
                throw PostgresCatalogError.noCatalog(location: location.description)
            }
            if !missing.isEmpty { throw PostgresCatalogError.olderSchema(location: location.description) }
            let rows = try await catalog.client.query("SELECT identity FROM cairn.catalog_library", logger: catalog.logger)
            for try await owner in rows.decode(String.self) where owner != library {
                throw PostgresCatalogError.otherLibrary(owner: owner, library: library, location: location.description)
            }
            return try await body(catalog)
        }
    }

    /// How long an operation keeps trying while its connections are lost (a server restart, `pg_terminate_backend`).
    static let reconnectPatience = Duration.seconds(60)

    /// Runs `body`, its errors named for `operation` in one line that helps (postgres-nio's own description says
    /// nothing, on purpose). A failure that running again can cure (`isTransient`) runs `body` again, backing off,
    /// for up to `reconnectPatience` from the first failure. Most of the catalog's writes are upserts and updates by
    /// key, which change nothing the second time; an insert whose commit went unanswered is refused by its key the
    /// second time, and so fails. Each try gets `tryTimeLimit`, on a pooled connection: a try given up there leaves
    /// its connection to the pool, never to the next try.
    func failing<Value: Sendable>(_ operation: String,
                                  _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await retrying(operation) { try await withTimeLimit(tryTimeLimit, "the statement", body) }
    }

    /// As `failing`, with no limit on a try: for the lease that holds a run's own tables for the whole run, and for
    /// the statements on that connection.
    func retrying<Value>(_ operation: String, _ body: () async throws -> Value) async throws -> Value {
        // The patience counts from the first failure: a try that hung until its limit still gets tries after it.
        var deadline: ContinuousClock.Instant?
        var pause = Duration.milliseconds(250)
        while true {
            do {
                return try await mapping(operation, body)
            } catch let failed as PostgresCatalogError where failed.isTransient {
                let giveUpAt = deadline ?? ContinuousClock.now + Self.reconnectPatience
                guard ContinuousClock.now < giveUpAt else { throw failed }
                deadline = giveUpAt
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(4))
            }
        }
    }

    private func mapping<Value>(_ operation: String, _ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch let error as PostgresCatalogError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch let error as PostgresTransactionError where error.closureError.map(Self.isOwn) == true {
            // A transaction's body refused on its own terms (a `pending` request that cannot be carried out).
            throw error.closureError!
        } catch {
            throw PostgresCatalogError.failed(operation: operation, reason: WorkQueueError.describe(error),
                                              transient: Self.isTransient(error))
        }
    }

    /// Whether `error` says the connection went (the server closed it, ended the session, or is shutting down or
    /// starting up), or that the server rolled the transaction back to end a deadlock or a serialization conflict:
    /// failures that running again can cure, as opposed to a statement the server refused.
    static func isTransient(_ error: any Error) -> Bool {
        if error is TimeLimitExceeded { return true }
        if let transaction = error as? PostgresTransactionError {
            return [transaction.closureError, transaction.beginError, transaction.commitError]
                .contains { $0.map(isTransient) == true }
        }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        // A connection the server ended mid-statement reads as closed by the client to postgres-nio.
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown: return true
        case .server:
            // 08: connection exceptions; 57P01-57P03: admin or crash shutdown, cannot connect now; 40001 and
            // 40P01: a serialization failure or a deadlock, the transaction rolled back.
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03", "40001", "40P01"].contains(state)
        default: return false
        }
    }

    /// An error of cairn's own, as opposed to one of the server or the connection.
    private static func isOwn(_ error: any Error) -> Bool { !(error is PSQLError) && !(error is PostgresTransactionError) }

    /// Makes the database `library`'s, or checks that it is: a catalog holds one library's records, and one
    /// opened for another library would mix two libraries' items.
    private func claim(location: PostgresLocation) async throws {
        let rows = try await client.query("""
            WITH claimed AS (
              INSERT INTO cairn.catalog_library (identity) VALUES (\(library)) ON CONFLICT DO NOTHING RETURNING identity)
            SELECT identity FROM claimed UNION ALL SELECT identity FROM cairn.catalog_library
            """, logger: logger)
        for try await owner in rows.decode(String.self) where owner != library {
            throw PostgresCatalogError.otherLibrary(owner: owner, library: library, location: location.description)
        }
    }
}

public enum PostgresCatalogError: Error, CustomStringConvertible, Equatable {
    /// The database holds another library's catalog.
    case otherLibrary(owner: String, library: String, location: String)
    /// A statement that returns a row returned none (the catalog changed under the call).
    case missingRow(String)
    /// The server or the connection failed an operation; `reason` is PostgreSQL's word, never the password;
    /// `transient`: running it again may succeed (`PostgresCatalog.isTransient`).
    case failed(operation: String, reason: String, transient: Bool = false)
    /// A command that only reads found no catalog in the database.
    case noCatalog(location: String)
    /// A command that only reads found the catalog's schema older than this cairn's.
    case olderSchema(location: String)
    /// The connection that held the run's own tables closed (the server restarted, or ended the session).
    case runConnectionLost

    /// The operation failed because its connection went or its transaction was rolled back, not because of what it
    /// asked.
    var isTransient: Bool {
        if case .failed(_, _, true) = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .otherLibrary(let owner, let library, let location):
            "the catalog at \(location) belongs to the library \(owner), not to \(library): give each library a database of its own"
        case .missingRow(let what):
            "the catalog returned no row for \(what)"
        case .failed(let operation, let reason, _):
            "the catalog could not \(operation): \(reason)"
        case .noCatalog(let location):
            "\(location) holds no cairn catalog yet (`cairn import --catalog` makes one)"
        case .runConnectionLost:
            "the catalog's server closed the connection that held this run's working tables (a restart, or the session ended); nothing is lost, and the next run resumes"
        case .olderSchema(let location):
            "the catalog at \(location) was made by an older cairn; the next `cairn import` or `cairn sync` brings it up to date"
        }
    }
}
