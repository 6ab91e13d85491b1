import CairnCatalog
import CairnCore
import Foundation
import Glibc

/// A library folder, and its lock while a command holds it. Its catalog is handed out beside it, never kept in
/// it: the folder's SQLite file (`openCatalog`, `withExclusiveAccess`) or a PostgreSQL database (`SharedCatalog`).
///
/// The same folder shape, without media, is an Immich destination's state (`Contents.stateOnly`): its lock, its
/// catalog, its run logs, never `originals/`, `derived/` or `tmp/`, since the media live on the server.
public final class Library: Sendable {
    /// What the folder keeps.
    public enum Contents: Sendable {
        /// A library: the originals and derived files, with their temporary folder.
        case media
        /// An Immich destination's state.
        case stateOnly
    }

    public let layout: LibraryLayout

    /// The exclusive lock, when the library was opened under it (`withExclusiveAccess`, `openForPostgresCatalog`):
    /// taken before the catalog is opened, so no migration ever runs beside another process's run.
    public let lock: LibraryLock?

    /// Opens the library folder at `root` without its lock, creating its folders on first use: for reading
    /// (`readOnly`: nothing is made or written), or for a caller that takes the lock itself (`ImportRun` runs
    /// `whileLocked`).
    public convenience init(root: String, readOnly: Bool = false, contents: Contents = .media) throws {
        let resolved = readOnly ? FileSystem.resolved(root) ?? root : try Self.makeRoot(root)
        try self.init(resolved: resolved, makesFolders: !readOnly && contents == .media, lock: nil)
    }

    /// Opens the folder's SQLite catalog (made and migrated unless `readOnly`); the caller closes it. A folder
    /// whose catalog is in PostgreSQL is refused with the reason.
    ///
    /// - Parameter live: read-only, beside a run that may be writing (`cairn serve`): the catalog is never read as
    ///   an immutable file, even when its write-ahead log is empty at the time it is opened.
    public func openCatalog(readOnly: Bool = false, live: Bool = false) throws -> SQLiteCatalog {
        if let postgres = layout.postgresCatalogNamed {
            throw WorkerError.libraryUnusable(layout.root, "its catalog is in PostgreSQL at \(postgres); this command reads "
                                              + "only a SQLite catalog so far (`cairn import --catalog` uses it)")
        }
        do {
            return try SQLiteCatalog(path: layout.catalogPath, readOnly: readOnly, live: live)
        } catch let error as CatalogError {
            throw WorkerError.libraryUnusable(layout.root, error.description)
        } catch {
            throw WorkerError.libraryUnusable(layout.root, "the catalog cannot be opened: \(error)")
        }
    }

    /// Opens, for reading only, a library whose catalog is in PostgreSQL at `postgres` (`dry-run`, `status`): no lock,
    /// nothing made or written in its folder; a folder whose catalog is its SQLite file or another database is refused.
    public static func openForReadingPostgresCatalog(root: String, postgres: String) throws -> Library {
        let resolved = FileSystem.resolved(root) ?? root
        try checkCatalog(of: LibraryLayout(root: resolved), isAt: postgres)
        return try Library(resolved: resolved, makesFolders: false, lock: nil)
    }

    /// The one way a command that writes a SQLite library opens it: its lock first (waiting up to a second for a
    /// holder that is letting go), then its catalog, opened and migrated; `body`; then the catalog closed and the
    /// lock given up, whatever `body` did.
    public static func withExclusiveAccess<Value>(root: String, contents: Contents = .media,
                                                  _ body: (Library, SQLiteCatalog) async throws -> Value) async throws -> Value {
        let resolved = try makeRoot(root)
        let library = try Library(resolved: resolved, makesFolders: contents == .media,
                                  lock: try await LibraryLock.take(libraryRoot: resolved))
        defer { library.close() }
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        return try await body(library, catalog)
    }

    /// Opens a library whose catalog is in PostgreSQL (`postgres`, described without its password), its lock
    /// taken first: no SQLite catalog is opened or made in its folder, which may be shared over NFS. The first such
    /// open records `postgres` in the folder (`LibraryLayout.catalogMarkerPath`); a folder that already keeps its
    /// catalog in SQLite, or names another database, is refused.
    public static func openForPostgresCatalog(root: String, postgres: String, contents: Contents = .media) async throws
        -> Library {
        let resolved = try makeRoot(root)
        let lock = try await LibraryLock.take(libraryRoot: resolved)
        do {
            let layout = LibraryLayout(root: resolved)
            try checkCatalog(of: layout, isAt: postgres)
            if layout.postgresCatalogNamed == nil {
                do { try LibraryLayout.writeMarker(postgres, at: layout.catalogMarkerPath) } catch {
                    throw WorkerError.libraryUnusable(resolved, "cannot record its catalog in \(layout.catalogMarkerPath): \(error)")
                }
            }
            return try Library(resolved: resolved, makesFolders: contents == .media, lock: lock)
        } catch {
            lock.release()
            throw error
        }
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

    /// Makes the library's folder if it is missing; returns its resolved path. Every open for writing passes here.
    private static func makeRoot(_ root: String) throws -> String {
        // A folder opened anew may be one made again where another was removed: its temporary shards too.
        TemporaryName.forgetShards()
        do { try FileSystem.makeDirectories(root, followingLinks: true) } catch { throw WorkerError.libraryUnusable(root, error.description) }
        return FileSystem.resolved(root) ?? root
    }

    /// `resolved`: the library's folder, made and resolved; `makesFolders`: its media folders made when missing.
    private init(resolved: String, makesFolders: Bool, lock: LibraryLock?) throws {
        layout = LibraryLayout(root: resolved)
        self.lock = lock
        if makesFolders { try Self.makeMediaFolders(of: layout) }
    }

    private static func makeMediaFolders(of layout: LibraryLayout) throws {
        for directory in [layout.originalsDirectory, layout.derivedDirectory, layout.temporaryDirectory] {
            do { try FileSystem.makeDirectories(directory) } catch {
                throw WorkerError.libraryUnusable(layout.root, error.description)
            }
        }
    }

    /// Gives up the lock, if held; call when the command is done with the library (after closing its catalog).
    public func close() {
        lock?.release()
    }

    /// Runs `body` while this process holds the library for a run: the exclusive lock taken at open, or one taken
    /// now (a library opened without it) and given up when `body` returns. `shared`: the readers' lock instead, for a
    /// run that must see the library at rest and changes nothing (a dry run).
    package func whileLocked<Value>(shared: Bool = false, _ body: () async throws -> Value) async throws -> Value {
        if shared {
            let reader = try ReaderLock(libraryRoot: layout.root)
            defer { reader.release() }
            return try await body()
        }
        guard lock == nil else { return try await body() }
        let taken = try await LibraryLock.take(libraryRoot: layout.root)
        defer { taken.release() }
        return try await body()
    }

    /// Removes what an interrupted run left in `tmp/` and its shards (the shards stay). Call only while holding the
    /// library lock. `untouchedSince`: only files last modified before it go, for a library whose `tmp/` queue
    /// workers write into while a run holds the lock (its own worker, or another host's over a shared folder).
    @discardableResult
    public func removeLeftoverTemporaryFiles(untouchedSince cutoff: Date? = nil) -> Int {
        let root = layout.temporaryDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return 0 }
        let limit = cutoff.map { Int64($0.timeIntervalSince1970) }
        func leftover(_ path: String) -> Bool {
            guard let limit else { return true }
            var info = stat()
            return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && Int64(info.st_mtim.tv_sec) < limit
        }
        var removed = 0
        for name in names {
            let path = root + "/" + name
            if leftover(path), unlink(path) == 0 {
                removed += 1
            } else if let inner = try? FileManager.default.contentsOfDirectory(atPath: path) {
                for file in inner where leftover(path + "/" + file) && unlink(path + "/" + file) == 0 { removed += 1 }
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
