import Logging
import PostgresNIO

/// One schema's shipped migrations in PostgreSQL (the queue's, the catalog's), applied in one transaction by one
/// process at a time: processes starting together wait for each other on an advisory lock named for the schema.
/// A shipped migration is never edited: a change is a new version.
package struct PostgresMigrations: Sendable {
    /// Names the lock and the table that records the versions applied (`NAME_migration`).
    package let name: String
    package let migrations: [(version: Int, statements: [String])]

    package init(name: String, migrations: [(version: Int, statements: [String])]) {
        self.name = name
        self.migrations = migrations
    }

    package func apply(_ client: PostgresClient, logger: Logger) async throws {
        let table = name + "_migration"
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(name + "_migrate")))", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: """
                CREATE TABLE IF NOT EXISTS \(table) (
                  version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """), logger: logger)
            var applied = Set<Int>()
            for try await version in try await connection.query(PostgresQuery(unsafeSQL: "SELECT version FROM \(table)"),
                                                                logger: logger).decode(Int.self) {
                applied.insert(version)
            }
            for migration in migrations where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(PostgresQuery(unsafeSQL: "INSERT INTO \(table) (version) VALUES ($1)",
                                                         binds: Self.binds(migration.version)), logger: logger)
            }
        }
    }

    /// The versions `apply` would add: every one when the schema was never made. Reads only.
    package func missing(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
        let table = name + "_migration"
        var applied = Set<Int>()
        let exists = try await client.query("SELECT to_regclass(\(table)) IS NOT NULL", logger: logger).decode(Bool.self)
        for try await found in exists where found {
            for try await version in try await client.query(PostgresQuery(unsafeSQL: "SELECT version FROM \(table)"),
                                                            logger: logger).decode(Int.self) {
                applied.insert(version)
            }
        }
        return migrations.map(\.version).filter { !applied.contains($0) }
    }

    private static func binds(_ version: Int) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(version)
        return binds
    }
}
