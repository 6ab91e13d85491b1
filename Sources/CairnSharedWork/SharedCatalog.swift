import CairnCatalog
import CairnCore
import CairnLibrary
import CairnPostgresCatalog
import CairnQueue
import CairnStatus
import CairnStore
import Foundation

/// A run whose library keeps its catalog in PostgreSQL (`--catalog`): the catalog opened (its schema brought up to
/// date, its database checked to be this library's), the library's lock held there for the run
/// (`LibraryRunLock`: one writer of a library at a time over every host that mounts it), and the library folder
/// opened without a SQLite catalog (`Library.openForPostgresCatalog`).
package enum SharedCatalog {
    /// Runs `body` with the library at `libraryRoot` and its catalog at `location`. An unreachable database or a
    /// library whose identity cannot be recorded throws `SharedWorkError` before `body` runs, a lock another host's
    /// run holds `LibraryLockedError`; what `body` throws comes through unchanged, unless the lock was lost to
    /// another run meanwhile (`LibraryLockedError`, `lost`). `command` names the run to other hosts; `lockLost` hears
    /// that the run must stop, and who took the lock. A run whose working tables went with their connection (the
    /// server restarted, or ended the session) runs again, up to `restarts` times, while `restarting` (told which
    /// time this is) agrees: what the first try did is in the catalog, and the next takes it up.
    package static func run<Value: Sendable>(
        catalog location: PostgresLocation, libraryRoot: String, store: (any ObjectStore)? = nil,
        contents: Library.Contents = .media, command: String,
        lockLost: @escaping @Sendable (String) -> Void = { _ in },
        restarts: Int = 0, restarting: (Int) -> Bool = { _ in false },
        _ body: (Library, PostgresCatalog) async throws -> Value
    ) async throws -> Value {
        let layout = LibraryLayout(root: FileSystem.resolved(libraryRoot) ?? libraryRoot)
        // Before the database is claimed for this library: a library refused here must not claim it.
        try Library.checkCatalog(of: layout, isAt: location.description)
        let identity = try await SharedImport.identity(of: layout, libraryRoot: libraryRoot, store: store)
        let takenBy = Locked<String?>(nil)
        let holder = "cairn \(command) (pid \(getpid()) on \(ProcessInfo.processInfo.hostName))"
        let outcome: Result<Value, any Error>
        do {
            outcome = try await PostgresCatalog.withCatalog(at: location, library: identity) { catalog in
                try await LibraryRunLock.holding(library: identity, at: location, holder: holder,
                                                 onLost: { other in takenBy.withLock { $0 = other }; lockLost(other) }) {
                    do {
                        let library = try await Library.openForPostgresCatalog(root: libraryRoot,
                                                                               postgres: location.description,
                                                                               contents: contents)
                        defer { library.close() }
                        var tries = 0
                        while true {
                            do {
                                return .success(try await body(library, catalog))
                            } catch PostgresCatalogError.runConnectionLost where tries < restarts && restarting(tries + 1) {
                                tries += 1
                            }
                        }
                    } catch {
                        return .failure(error)
                    }
                }
            }
        } catch let held as LibraryRunLockError {
            throw LibraryLockedError(libraryRoot: libraryRoot, heldElsewhereBy: held.description)
        } catch let error as PostgresCatalogError {
            throw SharedWorkError(error.description)
        } catch {
            throw SharedWorkError("the catalog at \(location): \(WorkQueueError.describe(error))")
        }
        if let other = takenBy.withLock({ $0 }) {
            throw LibraryLockedError(libraryRoot: libraryRoot, heldElsewhereBy: other, lost: true)
        }
        return try outcome.get()
    }

    /// Runs `body` with the catalog of the library at `layout`, in PostgreSQL at `location`, for reading only
    /// (`PostgresCatalog.reading`: never migrated, never claimed, no lock). A folder whose catalog is elsewhere or that
    /// has no identity to find it by, and a database that does not hold this library's catalog at the schema this
    /// cairn knows, throw before `body` runs.
    package static func reading<Value: Sendable>(layout: LibraryLayout, catalog location: PostgresLocation,
                                                 _ body: (PostgresCatalog) async throws -> Value) async throws -> Value {
        try Library.checkCatalog(of: layout, isAt: location.description)
        guard let identity = LibraryIdentity.read(layout) else {
            throw SharedWorkError("\(layout.root): the library has no \(LibraryLayout.identityFileName) to find its catalog by")
        }
        return try await PostgresCatalog.reading(at: location, library: identity, body)
    }
}

/// The status page's and the metrics' reads of a library whose catalog is in PostgreSQL: each read connects, checks
/// the database (`SharedCatalog.reading`), reads and lets go.
package struct PostgresStatusSource: StatusCatalogSource {
    package let layout: LibraryLayout
    let location: PostgresLocation

    package init(libraryRoot: String, location: PostgresLocation) {
        // As named, not resolved: the metrics' `library` label is the folder's name as the user gave it.
        layout = LibraryLayout(root: libraryRoot)
        self.location = location
    }

    package func reading<Value: Sendable>(_ body: (any StatusCatalog) async throws -> Value) async throws -> Value {
        try await SharedCatalog.reading(layout: layout, catalog: location) { try await body($0) }
    }
}
