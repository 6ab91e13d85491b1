import ArgumentParser
import CairnCore
import CairnImport
import CairnLibrary
#if SharedQueue
import CairnQueue
import CairnSharedWork
#endif
import CairnStages
import CairnStatus
import Foundation

/// A command that changes a library, on whichever catalog the library keeps: its SQLite file (the lock taken
/// before the catalog is opened or migrated), or a PostgreSQL database (`--catalog`, `$CAIRN_CATALOG`, cairn.toml's
/// `catalog`, or the folder's record of it: the folder's lock, then the library's lock held in the database).
enum CatalogAccess {
    /// Runs `body` with the existing library at `option` and its SQLite catalog, under the library's lock.
    private static func changingSQLite<Value: Sendable>(_ option: LibraryOption,
                                                        _ body: (Library, any LibraryCatalog) async throws -> Value)
        async throws -> Value {
        let root = option.resolvedPath
        try LibraryAccess.requireLibrary(at: root)
        return try await Library.withExclusiveAccess(root: root) { library in
            try await body(library, library.sqliteCatalog)
        }
    }

    /// Runs `body` with the existing library at `option` and its catalog, under the library's lock: its SQLite file, or
    /// the PostgreSQL database `catalog` names (the library's lock then held there too; `command` names the run to
    /// other hosts).
    static func changingExisting<Value: Sendable>(_ option: LibraryOption, catalog: CatalogLocationOption, command: String,
                                                  _ body: (Library, any LibraryCatalog) async throws -> Value) async throws
        -> Value {
        #if SharedQueue
        let root = option.resolvedPath
        if let location = try catalog.location(libraryRoot: root) {
            try LibraryAccess.requireLibrary(at: root)
            catalog.warnOfExposedPassword()
            return try await running(catalog: location, libraryRoot: root, command: command, body)
        }
        #endif
        return try await changingSQLite(option, body)
    }

    /// Runs `body` with the existing library and its catalog for reading only, without the library's lock: its
    /// SQLite file opened read-only, or the PostgreSQL database `catalog` names, neither migrated nor claimed
    /// (`PostgresCatalog.reading`).
    static func readingExisting<Value: Sendable>(_ option: LibraryOption, catalog: CatalogLocationOption,
                                                 _ body: (Library, any LibraryCatalog) async throws -> Value)
        async throws -> Value {
        let root = option.resolvedPath
        #if SharedQueue
        if let location = try catalog.location(libraryRoot: root) {
            return try await readingExisting(root: root, catalog: location, body)
        }
        #endif
        try LibraryAccess.requireLibrary(at: root)
        let library = try Library(root: root, readOnly: true)
        defer { library.close() }
        return try await body(library, library.sqliteCatalog)
    }

    #if SharedQueue
    /// As `readingExisting`, for the folder at `root` (a library, or an Immich destination's state in one) whose
    /// catalog is in PostgreSQL at `location`.
    static func readingExisting<Value: Sendable>(root: String, catalog location: PostgresLocation,
                                                 _ body: (Library, any LibraryCatalog) async throws -> Value)
        async throws -> Value {
        try LibraryAccess.requireLibrary(at: root)
        let library = try Library.openForReadingPostgresCatalog(root: root, postgres: location.description)
        return try await SharedCatalog.reading(layout: library.layout, catalog: location) { try await body(library, $0) }
    }
    #endif

    /// Where what reads the library while it may be running (`serve`, `watch --listen`, a locked run's metrics) reads
    /// its catalog: opened afresh for each read, without the lock, from its SQLite file or its PostgreSQL database.
    static func statusSource(libraryRoot: String, catalog: CatalogLocationOption) throws -> any StatusCatalogSource {
        #if SharedQueue
        if let location = try catalog.location(libraryRoot: libraryRoot) {
            return PostgresStatusSource(libraryRoot: libraryRoot, location: location)
        }
        #endif
        return SQLiteStatusSource(libraryRoot: libraryRoot)
    }

    /// As `statusSource(libraryRoot:catalog:)`, for a folder whose catalog is the one it records (an Immich
    /// destination's state): no flag, variable or cairn.toml names it.
    static func statusSource(recordedIn root: String) throws -> any StatusCatalogSource {
        #if SharedQueue
        if let location = try CatalogLocationOption.recorded(in: root) {
            return PostgresStatusSource(libraryRoot: root, location: location)
        }
        #endif
        return SQLiteStatusSource(libraryRoot: root)
    }

    #if SharedQueue
    /// How often a run whose working tables were lost with their connection starts again.
    private static let restarts = 3

    /// Runs `body` with the library at `libraryRoot` (made when missing) and its catalog in PostgreSQL at `location`.
    /// Should another run take the library's lock in the database meanwhile, `cancellation` stops this one; a run
    /// whose working tables went with their connection runs again, `restarts` times at most, unless a signal came.

    static func running<Value: Sendable>(catalog location: PostgresLocation, libraryRoot: String, command: String,
                                         cancellation: PipelineCancellation? = nil,
                                         _ body: (Library, any LibraryCatalog) async throws -> Value) async throws -> Value {
        try await SharedCatalog.run(catalog: location, libraryRoot: libraryRoot, command: command, lockLost: { other in
            Output.error("the library's lock in PostgreSQL went to another run (\(other)): stopping")
            cancellation?.cancel(deadline: PipelineCancellation.defaultDeadline)
        }, restarts: restarts, restarting: { time in
            guard cancellation?.isCancelled != true else { return false }
            Output.error("the catalog lost this run's working tables with their connection; running again "
                         + "(\(time) of \(restarts)): what was done is kept")
            return true
        }) {
            try await body($0, $1)
        }
    }

    /// As `running`, for an import or a sync: with the run's metrics, when `metrics` asks for them, read from the
    /// catalog as the run starts (and by the session as it ends), and a lock another run holds reported in them.
    /// `labelRoot`: the library the metrics name, when `libraryRoot` is an Immich destination's state inside it.
    static func running<Value: Sendable>(catalog location: PostgresLocation, libraryRoot: String, command: String,
                                         cancellation: PipelineCancellation?, metrics: RunMetricsSession.Settings?,
                                         labelRoot: String? = nil, sourceRoot: String,
                                         _ body: (Library, any LibraryCatalog, RunMetricsSession?) async throws -> Value)
        async throws -> Value {
        let labelRoot = labelRoot ?? libraryRoot
        do {
            return try await running(catalog: location, libraryRoot: libraryRoot, command: command,
                                     cancellation: cancellation) { opened, catalog in
                let session = try await RunMetricsSession.starting(metrics, layout: opened.layout, catalog: catalog,
                                                                   labelRoot: labelRoot, sourceRoot: sourceRoot)
                return try await body(opened, catalog, session)
            }
        } catch let locked as LibraryLockedError {
            if let metrics {
                await RunMetricsSession.reportLocked(settings: metrics,
                                                     source: PostgresStatusSource(libraryRoot: libraryRoot, location: location),
                                                     labelRoot: labelRoot, sourceRoot: sourceRoot)
            }
            throw locked
        }
    }
    #endif

    /// Runs `body`; prints any failure in one line on stderr and exits with its documented code: a held lock
    /// `ExitStatus.libraryLocked`, a run's own failure its status, anything else `ExitStatus.failure`.
    static func reportingFailures(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let exit as ExitCode {
            throw exit
        } catch let error as LibraryLockedError {
            Output.error(error.description)
            throw ExitCode(error.exitStatus.rawValue)
        } catch let error as WorkerError {
            Output.error(error.description)
            throw ExitCode(error.exitStatus.rawValue)
        } catch {
            Output.error("\(error)")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
    }
}
