import CairnCatalog
import CairnCore
import Foundation
import Glibc

/// An open library folder: its layout and its catalog.
public final class Library: Sendable {
    public let layout: LibraryLayout
    /// The SQLite catalog; nil for a library whose catalog is in PostgreSQL (`openForPostgresCatalog`).
    private let sqlite: Catalog?

    /// The library's SQLite catalog. A library opened for a PostgreSQL catalog has none: its runs reach their
    /// catalog through the interfaces they were given (`ImportRun.catalog`), and the commands that read SQLite
    /// alone refuse such a library when they open it (`WorkerError.libraryUnusable`), so reaching here for one is
    /// a mistake in cairn.
    public var catalog: Catalog {
        guard let sqlite else {
            preconditionFailure("library \(layout.root): its catalog is in PostgreSQL, not in \(layout.catalogPath)")
        }
        return sqlite
    }

    /// The library's SQLite catalog behind the catalog interfaces (`ItemCatalog` and the rest), for what takes any
    /// catalog.
    public var sqliteCatalog: SQLiteCatalog { SQLiteCatalog(catalog: catalog) }

    /// The exclusive lock, when the library was opened through `openExclusive` or `withExclusiveAccess`: taken
    /// before the catalog is opened, so no migration ever runs beside another process's run.
    public let lock: LibraryLock?

    /// Opens the library at `root`, creating its folders and catalog on first use, without its lock: for reading
    /// (`readOnly`), or for a caller that takes the lock itself (`ImportRun` takes `runLock()`).
    ///
    /// - Parameter readOnly: open an existing library without writing anything to it (`dry-run`, `status`).
    /// - Parameter live: read-only, beside a run that may be writing (`cairn serve`): the catalog is never read as
    ///   an immutable file, even when its write-ahead log is empty at the time it is opened.
    public convenience init(root: String, readOnly: Bool = false, live: Bool = false) throws {
        let resolved = readOnly ? FileSystem.resolved(root) ?? root : try Self.makeRoot(root)
        try self.init(resolved: resolved, readOnly: readOnly, live: live, lock: nil)
    }

    /// Opens, for reading only, a library whose catalog is in PostgreSQL at `postgres` (`dry-run`, `status`): no lock,
    /// nothing made or written in its folder; a folder whose catalog is its SQLite file or another database is refused.
    public static func openForReadingPostgresCatalog(root: String, postgres: String) throws -> Library {
        let resolved = FileSystem.resolved(root) ?? root
        try checkCatalog(of: LibraryLayout(root: resolved), isAt: postgres)
        return Library(resolvedForReading: resolved)
    }

    /// The one way a command that writes opens a library: its lock first (waiting up to a second for a holder
    /// that is letting go), then its catalog, opened and migrated. Close it when done.
    public static func openExclusive(root: String) async throws -> Library {
        let resolved = try makeRoot(root)
        let lock = try await LibraryLock.take(libraryRoot: resolved)
        return try Library(resolved: resolved, readOnly: false, live: false, lock: lock)
    }

    /// Opens a library whose catalog is in PostgreSQL (`postgres`, described without its password), its lock
    /// taken first: no SQLite catalog is opened or made in its folder, which may be shared over NFS. The first such
    /// open records `postgres` in the folder (`LibraryLayout.catalogMarkerPath`); a folder that already keeps its
    /// catalog in SQLite, or names another database, is refused.
    public static func openForPostgresCatalog(root: String, postgres: String) async throws -> Library {
        let resolved = try makeRoot(root)
        let lock = try await LibraryLock.take(libraryRoot: resolved)
        do {
            let layout = LibraryLayout(root: resolved)
            try checkCatalog(of: layout, isAt: postgres)
            if layout.postgresCatalogNamed == nil {
                do {
                    let temporary = layout.catalogMarkerPath + ".\(getpid()).new"
                    try Data((postgres + "\n").utf8).write(to: URL(fileURLWithPath: temporary))
                    try FileSystem.syncFile(temporary)
                    try FileSystem.renameDurably(temporary, to: layout.catalogMarkerPath)
                } catch {
                    throw WorkerError.libraryUnusable(resolved, "cannot record its catalog in \(layout.catalogMarkerPath): \(error)")
                }
            }
            return try Library(resolved: resolved, lock: lock)
        } catch {
            lock.release()
            throw error
        }
    }

    /// `openExclusive`, `body`, then the catalog closed and the lock given up, whatever `body` did.
    public static func withExclusiveAccess<Value>(root: String, _ body: (Library) async throws -> Value) async throws
        -> Value
    {
        let library = try await openExclusive(root: root)
        defer { library.close() }
        return try await body(library)
    }


    /// Throws unless the library at `layout` may keep its catalog in PostgreSQL at `postgres`: it has no SQLite
    /// catalog, and names no other database. A caller checks before it claims the database for the library.
    public static func checkCatalog(of layout: LibraryLayout, isAt postgres: String) throws {
        if FileManager.default.fileExists(atPath: layout.catalogPath) {
            throw WorkerError.libraryUnusable(layout.root, "its catalog is the SQLite file \(layout.catalogPath); "
                                              + "moving a catalog to PostgreSQL is not supported yet")
        }
        if let named = layout.postgresCatalogNamed, named != postgres {
            throw WorkerError.libraryUnusable(layout.root, "its catalog is in PostgreSQL at \(named), not at \(postgres)")
        }
    }

    /// Makes the library's folder if it is missing; returns its resolved path.
    private static func makeRoot(_ root: String) throws -> String {
        do { try FileSystem.makeDirectories(root, followingLinks: true) } catch { throw WorkerError.libraryUnusable(root, error.description) }
        return FileSystem.resolved(root) ?? root
    }

    /// `resolved`: the library's folder, made (unless `readOnly`) and resolved.
    private init(resolved: String, readOnly: Bool, live: Bool, lock: LibraryLock?) throws {
        layout = LibraryLayout(root: resolved)
        self.lock = lock
        if let postgres = layout.postgresCatalogNamed {
            throw WorkerError.libraryUnusable(resolved, "its catalog is in PostgreSQL at \(postgres); this command reads "
                                              + "only a SQLite catalog so far (`cairn import --catalog` uses it)")
        }
        try Self.makeFolders(of: layout, unless: readOnly)
        do {
            sqlite = try Catalog(path: layout.catalogPath, readOnly: readOnly, live: live)
        } catch let error as CatalogError {
            throw WorkerError.libraryUnusable(resolved, error.description)
        } catch {
            throw WorkerError.libraryUnusable(resolved, "the catalog cannot be opened: \(error)")
        }
    }

    /// A library whose catalog is in PostgreSQL: its folders, no SQLite catalog.
    private init(resolved: String, lock: LibraryLock) throws {
        layout = LibraryLayout(root: resolved)
        self.lock = lock
        sqlite = nil
        try Self.makeFolders(of: layout, unless: false)
    }

    /// A library whose catalog is in PostgreSQL, for reading: its layout alone.
    private init(resolvedForReading resolved: String) {
        layout = LibraryLayout(root: resolved)
        lock = nil
        sqlite = nil
    }

    private static func makeFolders(of layout: LibraryLayout, unless readOnly: Bool) throws {
        guard !readOnly else { return }
        TemporaryName.forgetShards()
        for directory in [layout.originalsDirectory, layout.derivedDirectory, layout.temporaryDirectory] {
            do { try FileSystem.makeDirectories(directory) } catch {
                throw WorkerError.libraryUnusable(layout.root, error.description)
            }
        }
    }

    /// Closes the catalog, then gives up the lock; call when the command is done with the library.
    public func close() {
        sqlite?.close()
        lock?.release()
    }

    /// The library's exclusive lock for a run: the one taken at open, or a new one (a library opened without it).
    package func runLock() async throws -> LibraryLock? {
        lock == nil ? try await LibraryLock.take(libraryRoot: layout.root) : nil
    }

    /// Removes what an interrupted run left in `tmp/` and its shards (the shards stay). Call only while holding the
    /// library lock.
    @discardableResult
    public func removeLeftoverTemporaryFiles() -> Int {
        let root = layout.temporaryDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return 0 }
        var removed = 0
        for name in names {
            let path = root + "/" + name
            if unlink(path) == 0 {
                removed += 1
            } else if let inner = try? FileManager.default.contentsOfDirectory(atPath: path) {
                for file in inner where unlink(path + "/" + file) == 0 { removed += 1 }
            }
        }
        return removed
    }
}

/// Failures that stop a whole command, as opposed to one file.
public enum WorkerError: Error, CustomStringConvertible, Sendable {
    case libraryUnusable(String, String)
    case sourceUnusable(String)
    /// SIGINT or SIGTERM stopped the run before it had anything to keep (during the walk).
    case interrupted(String)

    public var description: String {
        switch self {
        case .libraryUnusable(let root, let reason): return "library \(root): \(reason)"
        case .sourceUnusable(let reason), .interrupted(let reason): return reason
        }
    }

    public var exitStatus: ExitStatus {
        if case .interrupted = self { return .interrupted }
        return .failure
    }
}
