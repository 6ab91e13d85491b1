import CairnCatalog
import CairnCore
import CairnPostgresCatalog
import CairnQueue
import CairnReconcileOracle
import CairnTesting
import PostgresNIO
import Testing

/// An import's in-flight marks and its state saves run at once, on two connections (the marks go ahead of a save that
/// waits for the file system's sync); both lock their rows in id order, so neither can hold a row the other waits
/// for while waiting for one the other holds (before, imports died now and then with "deadlock detected").
///
/// Each test holds the lowest item's row in a transaction of its own, hands the catalog every item in reverse, and
/// looks, while the catalog's statement waits, at which rows it has taken: none, when it locks in id order. That
/// row is also moved to the end of the table first, so neither the order given nor the table's order is id order.
@Suite struct PostgresLockOrderTests {
    static let count = 200

    @Test func marksLockTheirRowsInIdOrder() async throws {
        try await Self.whileTheFirstRowIsHeld { catalog, records in
            try await catalog.markImportItemsInFlight(records.reversed().map { InFlightMark(id: $0.id, alone: false) })
        } then: { catalog in
            let marked = try await catalog.importItemsInFlight()
            #expect(marked.count == Self.count)
        }
    }

    @Test func savesLockTheirRowsInIdOrder() async throws {
        try await Self.whileTheFirstRowIsHeld { catalog, records in
            let done = records.reversed().map { record in
                var done = record
                done.state = .ready
                return done
            }
            try await catalog.saveImportItemStates(done, with: StageRows())
        } then: { catalog in
            let saved = try await catalog.importItems()
            #expect(saved.filter { $0.state == .ready }.count == Self.count)
        }
    }

    /// Plans `count` items, holds the first one's row, runs `write` with them and checks, while it waits for that
    /// row, that it holds none of the others; then lets it finish and runs `check`.
    static func whileTheFirstRowIsHeld(_ write: @escaping @Sendable (PostgresCatalog, [ItemRecord]) async throws -> Void,
                                       then check: (PostgresCatalog) async throws -> Void) async throws {
        let location = try CatalogBackend.freshDatabase()
        try await PostgresCatalog.withCatalog(at: location, library: "/library") { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            let records = try await catalog.planImportItems(
                (1...count).map { ItemCatalogContractTests.item($0, "\($0).jpg") }, sourceID: source)
            let first = try #require(records.map(\.id.rawValue).min())
            _ = try TestPostgres.psql("UPDATE cairn.import_item SET size = size WHERE id = \(first)", database: location.database)

            let holder = PostgresClient(configuration: location.clientConfiguration())
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await holder.run() }
                defer { group.cancelAll() }
                try await holder.withConnection { connection in
                    let logger = Logger(label: "lock-order")
                    _ = try await connection.query("BEGIN", logger: logger)
                    _ = try await connection.query("SELECT id FROM cairn.import_item WHERE id = \(first) FOR UPDATE",
                                                   logger: logger)
                    let writing = Task { try await write(catalog, records) }
                    try await waitForALockWait(in: location.database)
                    let free = try TestPostgres.psql("""
                        SELECT count(*) FROM (SELECT id FROM cairn.import_item WHERE id <> \(first) FOR UPDATE SKIP LOCKED) s
                        """, database: location.database)
                    #expect(free == String(count - 1), "the waiting statement holds no other row")
                    _ = try await connection.query("COMMIT", logger: logger)
                    try await writing.value
                }
            }
            try await check(catalog)
        }
    }

    /// Returns once a session of `database` waits for a row lock.
    static func waitForALockWait(in database: String) async throws {
        for _ in 0..<400 {
            let waiting = try TestPostgres.psql("""
                SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                """, database: database)
            if waiting != "0" { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        Issue.record("no statement waited for the held row")
    }
}
