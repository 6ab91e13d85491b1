import CairnCatalog
import CairnLibrary

/// Where the status page and `/metrics` read a library's catalog: opened for each read, read-only and without the
/// run lock, so a server answers while a sync runs, finds a library made after it started, and writes nothing.
public protocol StatusCatalogSource: Sendable {
    var layout: LibraryLayout { get }
    func reading<Value: Sendable>(_ body: (any StatusCatalog) async throws -> Value) async throws -> Value
}

/// A library whose catalog is its SQLite file.
public struct SQLiteStatusSource: StatusCatalogSource {
    public let layout: LibraryLayout

    public init(libraryRoot: String) { layout = LibraryLayout(root: libraryRoot) }

    public func reading<Value: Sendable>(_ body: (any StatusCatalog) async throws -> Value) async throws -> Value {
        let catalog = try Library(root: layout.root, readOnly: true).openCatalog(readOnly: true, live: true)
        defer { catalog.close() }
        return try await body(catalog)
    }
}
