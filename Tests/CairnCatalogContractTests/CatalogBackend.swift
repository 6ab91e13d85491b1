import CairnCatalog
import CairnPostgresCatalog
import CairnQueue
import CairnTesting
import Testing

/// What the contract suite asks of a catalog.
typealias CatalogUnderTest = ItemCatalog & SnapshotCatalog & RunCatalog & ReconcileCatalog & TrashCatalog
    & AssetLinkCatalog & RunTablesCatalog

/// The catalog backends the contract suite runs on: SQLite (a file in a temporary folder) and PostgreSQL (a fresh
/// database of the suite's cluster, sorting text by ICU's en-US as production databases do rather than bytewise).
enum CatalogBackend: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    func withCatalog(_ body: (any CatalogUnderTest) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            let folder = try TemporaryDirectory()
            let catalog = try Catalog(path: folder.subpath("catalog.sqlite"))
            defer { catalog.close() }
            try await body(SQLiteCatalog(catalog: catalog))
        case .postgres:
            try await PostgresCatalog.withCatalog(at: try Self.freshDatabase(), library: "/library") { try await body($0) }
        }
    }

    static func freshDatabase(password: String? = nil) throws -> PostgresLocation {
        PostgresLocation(endpoint: .socket(folder: try TestPostgres.socketFolder(), port: 5432), password: password,
                         database: try TestPostgres.freshDatabase(naturalCollation: true))
    }
}
