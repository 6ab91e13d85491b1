import CairnCore
import CairnQueue
import CairnTesting
import Foundation
import Testing

/// The library's lock in PostgreSQL, in one process: who holds it is named, and it is let go when the run ends.
@Suite struct LibraryRunLockUnitTests {
    let location: PostgresLocation

    init() throws {
        location = PostgresLocation(endpoint: .socket(folder: try TestPostgres.socketFolder(), port: 5432),
                                    database: try TestPostgres.freshDatabase())
    }

    @Test func aSecondHolderIsToldWhoHoldsTheLockAndTakesItOnceTheFirstRunEnds() async throws {
        let library = UUID().uuidString.lowercased()
        let refusal: LibraryRunLockError? = try await LibraryRunLock.holding(library: library, at: location, holder: "first run",
                                                                             onLost: { _ in }) {
            do {
                try await LibraryRunLock.holding(library: library, at: location, holder: "second run", onLost: { _ in }) {}
                return nil
            } catch let error as LibraryRunLockError { return error }
        }
        let refused = try #require(refusal, "a second session took a lock the first held")
        #expect(refused.description.hasPrefix("held in PostgreSQL by first run, connected from a local socket since "))
        // Another library's lock is another key.
        try await LibraryRunLock.holding(library: library, at: location, holder: "first run", onLost: { _ in }) {
            try await LibraryRunLock.holding(library: UUID().uuidString.lowercased(), at: location, holder: "other", onLost: { _ in }) {}
        }
        // Let go at the end of the first run (its body returned), so the next one runs.
        let ran = try await LibraryRunLock.holding(library: library, at: location, holder: "second run", onLost: { _ in }) { true }
        #expect(ran)
        #expect(try TestPostgres.psql("""
            SELECT count(*) FROM pg_locks
            WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """, database: location.database) == "0")
    }
}
