import CairnCatalog
import CairnCore
import CairnLibrary
import CairnPostgresCatalog
import CairnQueue
import CairnReconcileOracle
import CairnTesting
import Testing

/// What the contract suite asks of a catalog.
typealias CatalogUnderTest = ItemCatalog & SnapshotCatalog & RunCatalog & ReconcileOracleCatalog & TrashCatalog
    & CatalogInspection
    & AssetLinkCatalog & RunTablesCatalog & BrowseCatalog & DriftCatalog & StoredFileCatalog

/// The catalog backends the contract suite runs on: SQLite (a file in a temporary folder) and PostgreSQL (a fresh
/// database of the suite's cluster, sorting text by ICU's en-US as production databases do rather than bytewise).
enum CatalogBackend: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    func withCatalog(_ body: (any CatalogUnderTest) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            let folder = try TemporaryDirectory()
            let catalog = try SQLiteCatalog(path: folder.subpath("catalog.sqlite"))
            defer { catalog.close() }
            try await body(catalog)
        case .postgres:
            try await PostgresCatalog.withCatalog(at: try Self.freshDatabase(), library: "/library") { try await body($0) }
        }
    }

    /// A library folder in a temporary folder with this backend's catalog: its SQLite file, or a fresh database
    /// (the folder then holds no SQLite catalog, as `cairn import --catalog` leaves it).
    func withLibrary(_ body: (Library, any CatalogUnderTest) async throws -> Void) async throws {
        let folder = try TemporaryDirectory()
        defer { withExtendedLifetime(folder) {} }
        switch self {
        case .sqlite:
            let library = try Library(root: folder.subpath("library"))
            let catalog = try library.openCatalog()
            defer { catalog.close() }
            defer { library.close() }
            try await body(library, catalog)
        case .postgres:
            let location = try Self.freshDatabase()
            let library = try await Library.openForPostgresCatalog(root: folder.subpath("library"),
                                                                   postgres: location.description)
            defer { library.close() }
            try await PostgresCatalog.withCatalog(at: location, library: library.layout.root) { try await body(library, $0) }
        }
    }

    static func freshDatabase(password: String? = nil) throws -> PostgresLocation {
        PostgresLocation(endpoint: .socket(folder: try TestPostgres.socketFolder(), port: 5432), password: password,
                         database: try TestPostgres.freshDatabase(naturalCollation: true))
    }
}
