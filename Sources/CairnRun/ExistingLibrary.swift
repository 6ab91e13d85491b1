import CairnCore
import CairnImport
import CairnLibrary
import CairnStatus
#if SharedQueue
import CairnSharedWork
#endif

/// What the commands that change or read a library that must already exist open (`pending`, `tape`, `restore`,
/// `status`, `ls`, the status page): the same two backends as a run, chosen the same way.
extension RunAssembly {
    /// Runs `body` with the existing library (or Immich state folder) at `root` and its catalog, under the
    /// library's lock: its SQLite file, or the PostgreSQL database `catalog` names (the lock then held there too;
    /// `command` names the run to other hosts).
    public static func changingExisting<Value: Sendable>(
        root: String, contents: Library.Contents = .media, catalog: PostgresLocation?, command: String,
        notice: @escaping @Sendable (String) -> Void, _ body: (Library, any LibraryCatalog) async throws -> Value
    ) async throws -> Value {
        guard LibraryLayout.holdsLibrary(root) else { throw RunAccessError.noLibrary(root) }
        var request = RunRequest(command: command, libraryRoot: root, stateRoot: contents == .stateOnly ? root : nil,
                                 sourceRoot: root)
        request.catalog = catalog
        return try await open(request, notice: notice) { try await body($0.library, $0.catalog) }
    }

    /// Runs `body` with the existing library at `root` and its catalog for reading only, without the library's
    /// lock: its SQLite file opened read-only, or the PostgreSQL database `catalog` names, neither migrated nor
    /// claimed.
    public static func readingExisting<Value: Sendable>(
        root: String, catalog: PostgresLocation?, _ body: (Library, any LibraryCatalog) async throws -> Value
    ) async throws -> Value {
        guard LibraryLayout.holdsLibrary(root) else { throw RunAccessError.noLibrary(root) }
        var request = RunRequest(command: "read", libraryRoot: root, sourceRoot: root)
        request.catalog = catalog
        request.readOnly = true
        return try await open(request, notice: { _ in }) { try await body($0.library, $0.catalog) }
    }

    /// Where what reads the library while a run may be writing it (`serve`, `watch --listen`, a locked run's
    /// metrics) reads its catalog: opened afresh for each read, without the lock.
    public static func statusSource(root: String, catalog: PostgresLocation?) throws -> any StatusCatalogSource {
        guard let catalog else { return SQLiteStatusSource(libraryRoot: root) }
        #if SharedQueue
        return PostgresStatusSource(libraryRoot: root, location: catalog)
        #else
        throw noPostgres
        #endif
    }
}
