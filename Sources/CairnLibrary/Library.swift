import CairnCatalog
import CairnCore
import Foundation
import Glibc

/// An open library folder: its layout and its catalog.
public final class Library: Sendable {
    public let layout: LibraryLayout
    public let catalog: Catalog

    /// Opens the library at `root`, creating its folders and catalog on first use.
    ///
    /// - Parameter readOnly: open an existing library without writing anything to it (`dry-run`, `status`).
    /// The exclusive lock, when the library was opened `exclusive`: taken before the catalog is opened, so no
    /// migration ever runs beside another process's run.
    public let lock: LibraryLock?

    /// - Parameter live: read-only, beside a run that may be writing (`cairn serve`): the catalog is never read as
    ///   an immutable file, even when its write-ahead log is empty at the time it is opened.
    public init(root: String, readOnly: Bool = false, exclusive: Bool = false, live: Bool = false) throws {
        if !readOnly {
            do { try FileSystem.makeDirectories(root, followingLinks: true) } catch { throw WorkerError.libraryUnusable(root, error.description) }
        }
        let resolved = FileSystem.resolved(root) ?? root
        layout = LibraryLayout(root: resolved)
        lock = exclusive && !readOnly ? try LibraryLock(libraryRoot: resolved) : nil
        if !readOnly {
            for directory in [layout.originalsDirectory, layout.derivedDirectory, layout.temporaryDirectory] {
                do { try FileSystem.makeDirectories(directory) } catch {
                    throw WorkerError.libraryUnusable(resolved, error.description)
                }
            }
        }
        do {
            catalog = try Catalog(path: layout.catalogPath, readOnly: readOnly, live: live)
        } catch let error as CatalogError {
            throw WorkerError.libraryUnusable(resolved, error.description)
        } catch {
            throw WorkerError.libraryUnusable(resolved, "the catalog cannot be opened: \(error)")
        }
    }

    /// Closes the catalog, then gives up the lock; call when the command is done with the library.
    public func close() {
        catalog.close()
        lock?.release()
    }

    /// The library's exclusive lock for a run: the one taken at open, or a new one.
    package func runLock() throws -> LibraryLock? {
        lock == nil ? try LibraryLock(libraryRoot: layout.root) : nil
    }

    /// Removes what an interrupted run left in `tmp/`. Call only while holding the library lock.
    @discardableResult
    public func removeLeftoverTemporaryFiles() -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: layout.temporaryDirectory) else { return 0 }
        var removed = 0
        for name in names where unlink(layout.temporaryDirectory + "/" + name) == 0 { removed += 1 }
        return removed
    }
}

/// Failures that stop a whole command, as opposed to one file.
public enum WorkerError: Error, CustomStringConvertible, Sendable {
    case libraryUnusable(String, String)
    case sourceUnusable(String)

    public var description: String {
        switch self {
        case .libraryUnusable(let root, let reason): return "library \(root): \(reason)"
        case .sourceUnusable(let reason): return reason
        }
    }
}
