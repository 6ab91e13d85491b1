import CairnCatalog
import CairnCore
import CairnImport
import CairnLibrary
import CairnStages
import CairnStatus
import CairnStore
#if SharedQueue
import CairnSharedWork
#endif
import Foundation

/// The shared queue a run takes part in (`--queue`): where it is, how many of the queued jobs the run does itself,
/// and whether it waits for the rest (`--no-wait`: it leaves them to workers).
public struct SharedWorkRequest: Sendable {
    public var queue: PostgresLocation
    public var lanes: Int
    public var waits: Bool

    public init(queue: PostgresLocation, lanes: Int, waits: Bool) {
        self.queue = queue; self.lanes = lanes; self.waits = waits
    }
}

/// Everything that decides where an import, a sync or a dry run keeps its records, as the command line resolved it.
public struct RunRequest: Sendable {
    /// Names the run to other hosts that find the library locked (`cairn sync (pid N on HOST)`).
    public var command: String
    /// The library `--library` names: its cairn.toml, and the `library` label of the run's metrics.
    public var libraryRoot: String
    /// The folder whose records the run keeps when it is not the library's own: an Immich destination's state.
    public var stateRoot: String?
    public var sourceRoot: String
    /// A dry run: the catalog read as it stands, no lock, no migration, never made.
    public var readOnly = false
    /// `--catalog`: the records in PostgreSQL instead of the folder's SQLite file.
    public var catalog: PostgresLocation?
    /// `--queue`: thumbnails and clips shared with workers.
    public var sharedWork: SharedWorkRequest?
    /// The store the library's files are in (`--store`): a shared run records the library's identity there, and
    /// its queued work reads and writes it.
    public var store: (any ObjectStore)?
    /// Metrics for Prometheus, when the run asked for them.
    public var metrics: RunMetricsSession.Settings?
    /// Stopped when another run takes the library's lock in PostgreSQL.
    public var cancellation: PipelineCancellation?

    public init(command: String, libraryRoot: String, stateRoot: String? = nil, sourceRoot: String) {
        self.command = command; self.libraryRoot = libraryRoot; self.stateRoot = stateRoot; self.sourceRoot = sourceRoot
    }

    /// The folder the run's records belong to.
    public var root: String { stateRoot ?? libraryRoot }

    /// A library holds media; an Immich destination's state folder only cairn's records.
    var contents: Library.Contents { stateRoot == nil ? .media : .stateOnly }
}

/// An opened run: the library folder (or an Immich destination's state folder) with its lock, the catalog beside
/// it, the destination that queues derivative work when the run shares it, and the run's metrics.
public struct RunContext: Sendable {
    public let library: Library
    public let catalog: any LibraryCatalog
    /// The shared queue's destination (`--queue`); nil: the run makes its derivatives itself, or sends to Immich.
    package let sharedDestination: (any ImportDestination)?
    public let metrics: RunMetricsSession?
}

/// A failure to open a run that a person can act on, said in one sentence (no such library, a build without
/// PostgreSQL).
public struct RunAccessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }

    /// A library folder that was never made.
    static func noLibrary(_ root: String) -> RunAccessError {
        RunAccessError("\(root): no cairn library here (nothing imported yet, or a different --library?)")
    }
}

/// Opens every run over a library in one place: the library and its lock, its catalog (the folder's SQLite file or
/// a PostgreSQL database), the shared queue, and the run's metrics. The command line parses and renders; which
/// backend keeps what is decided here alone, and only here does the build's `SharedQueue` trait matter.
public enum RunAssembly {
    /// Whether this build reaches PostgreSQL (`--catalog`, `--queue`, `cairn worker`).
    public static var hasPostgres: Bool {
        #if SharedQueue
        true
        #else
        false
        #endif
    }

    /// How often a run whose working tables were lost with their PostgreSQL connection starts again.
    static let restarts = 3

    /// Runs `body` with the run `request` describes. A lock another process holds throws `LibraryLockedError` (the
    /// run's metrics, when asked for, say `locked`); `notice` hears what a person should know on the way (a lock
    /// lost to another run, a restart, a queue with no worker). With a catalog in PostgreSQL `body` may run again
    /// after the catalog lost its working tables: what the try before did is kept.
    public static func open<Value: Sendable>(_ request: RunRequest, notice: @escaping @Sendable (String) -> Void,
                                             _ body: (RunContext) async throws -> Value) async throws -> Value {
        if let location = request.catalog {
            #if SharedQueue
            return try await openPostgres(request, catalog: location, notice: notice, body)
            #else
            throw noPostgres
            #endif
        }
        if !request.readOnly, let shared = request.sharedWork {
            #if SharedQueue
            return try await SharedImport.run(
                queue: shared.queue, libraryRoot: request.libraryRoot, store: request.store, lanes: shared.lanes,
                waits: shared.waits,
                command: request.command, warn: { notice("warning: \($0)") },
                lockLost: lockLost(request, notice: notice)) { destination in
                    try await openSQLite(request) { try await body(RunContext(library: $0, catalog: $1,
                                                                             sharedDestination: destination, metrics: $2)) }
                }
            #else
            throw noPostgres
            #endif
        }
        return try await openSQLite(request) {
            try await body(RunContext(library: $0, catalog: $1, sharedDestination: nil, metrics: $2))
        }
    }

    static let noPostgres = RunAccessError(
        "this cairn was built without PostgreSQL: it cannot reach a catalog or queue there (scripts/import --with-postgres, "
        + "or swift build with the default traits, builds one that can)")

    /// The folder's SQLite catalog: the lock first, then the catalog (opened and migrated); a dry run reads an
    /// existing one without either.
    private static func openSQLite<Value: Sendable>(_ request: RunRequest,
                                                    _ body: (Library, any LibraryCatalog, RunMetricsSession?) async throws -> Value)
        async throws -> Value {
        let root = request.root
        guard !request.readOnly else {
            guard LibraryLayout.holdsLibrary(root) else {
                throw RunAccessError("\(root): no cairn library here yet; a dry run never creates one "
                                     + "(run `cairn sync` or `cairn import`)")
            }
            let library = try Library(root: root, readOnly: true, contents: request.contents)
            let catalog = try library.openCatalog(readOnly: true)
            defer { catalog.close() }
            return try await withMetrics(request, library, catalog, body)
        }
        do {
            return try await Library.withExclusiveAccess(root: root, contents: request.contents) {
                try await withMetrics(request, $0, $1, body)
            }
        } catch let locked as LibraryLockedError {
            await reportLocked(request, source: SQLiteStatusSource(libraryRoot: root))
            throw locked
        }
    }

    /// `body` with the opened SQLite catalog and the run's metrics, read from it as the run starts.
    private static func withMetrics<Value: Sendable>(
        _ request: RunRequest, _ library: Library, _ catalog: SQLiteCatalog,
        _ body: (Library, any LibraryCatalog, RunMetricsSession?) async throws -> Value
    ) async throws -> Value {
        let metrics = try await RunMetricsSession.starting(request.metrics, layout: library.layout, catalog: catalog,
                                                           labelRoot: request.libraryRoot, sourceRoot: request.sourceRoot)
        return try await body(library, catalog, metrics)
    }

    #if SharedQueue
    /// The catalog in PostgreSQL: its lock held there (a dry run reads it as it stands), the shared queue joined
    /// under that lock when the run shares its work.
    private static func openPostgres<Value: Sendable>(_ request: RunRequest, catalog location: PostgresLocation,
                                                      notice: @escaping @Sendable (String) -> Void,
                                                      _ body: (RunContext) async throws -> Value) async throws -> Value {
        if request.readOnly {
            guard LibraryLayout.holdsLibrary(request.root) else { throw RunAccessError.noLibrary(request.root) }
            let library = try Library.openForReadingPostgresCatalog(root: request.root, postgres: location.description)
            return try await SharedCatalog.reading(layout: library.layout, catalog: location) {
                try await body(RunContext(library: library, catalog: $0, sharedDestination: nil, metrics: nil))
            }
        }
        do {
            return try await SharedCatalog.run(
                catalog: location, libraryRoot: request.root, store: request.store, contents: request.contents,
                command: request.command,
                lockLost: lockLost(request, notice: notice), restarts: restarts,
                restarting: { time in
                    guard request.cancellation?.isCancelled != true else { return false }
                    notice("the catalog lost this run's working tables with their connection; running again "
                           + "(\(time) of \(restarts)): what was done is kept")
                    return true
                }) { library, catalog in
                    let metrics = try await RunMetricsSession.starting(
                        request.metrics, layout: library.layout, catalog: catalog, labelRoot: request.libraryRoot,
                        sourceRoot: request.sourceRoot)
                    guard let shared = request.sharedWork else {
                        return try await body(RunContext(library: library, catalog: catalog, sharedDestination: nil,
                                                         metrics: metrics))
                    }
                    guard let identity = LibraryIdentity.read(library.layout) else {
                        throw SharedWorkError("\(library.layout.root): the library has no \(LibraryLayout.identityFileName)")
                    }
                    return try await SharedImport.takingPart(
                        queue: shared.queue, layout: library.layout, store: request.store, identity: identity,
                        lanes: shared.lanes,
                        waits: shared.waits, command: request.command, warn: { notice("warning: \($0)") }) {
                            try await body(RunContext(library: library, catalog: catalog, sharedDestination: $0,
                                                      metrics: metrics))
                        }
                }
        } catch let locked as LibraryLockedError {
            await reportLocked(request, source: PostgresStatusSource(libraryRoot: request.root, location: location))
            throw locked
        }
    }
    #endif

    /// Another run took the library's lock in PostgreSQL: this one stops.
    private static func lockLost(_ request: RunRequest, notice: @escaping @Sendable (String) -> Void)
        -> @Sendable (String) -> Void {
        let cancellation = request.cancellation
        return { other in
            notice("the library's lock in PostgreSQL went to another run (\(other)): stopping")
            cancellation?.cancel(deadline: PipelineCancellation.defaultDeadline)
        }
    }

    /// A run that could not take the lock still writes its metrics, saying `locked`.
    private static func reportLocked(_ request: RunRequest, source: any StatusCatalogSource) async {
        guard let metrics = request.metrics else { return }
        await RunMetricsSession.reportLocked(settings: metrics, source: source, labelRoot: request.libraryRoot,
                                             sourceRoot: request.sourceRoot)
    }
}
