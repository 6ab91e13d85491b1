import CairnPostgresCatalog
import CairnTesting
import Testing

/// `PostgresCatalog.reading`, what `cairn status` opens: it changes nothing, and refuses a database without this
/// library's catalog rather than reading another's or an empty one.
@Suite struct PostgresCatalogReadingTests {
    @Test func readingChangesNothingAndRefusesWhatIsNotThisLibrarysCatalog() async throws {
        let location = try CatalogBackend.freshDatabase()
        await #expect(throws: PostgresCatalogError.noCatalog(location: location.description)) {
            try await PostgresCatalog.reading(at: location, library: "lib-a") { _ in }
        }
        #expect(try TestPostgres.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'cairn'",
                                      database: location.database) == "0", "reading made no schema")

        try await PostgresCatalog.withCatalog(at: location, library: "lib-a") { catalog in
            _ = try await catalog.sourceID(forRoot: "/photos")
        }
        let sources = try await PostgresCatalog.reading(at: location, library: "lib-a") { try await $0.sources() }
        #expect(sources.map(\.rootPath) == ["/photos"])
        await #expect(throws: PostgresCatalogError.otherLibrary(owner: "lib-a", library: "lib-b", location: location.description)) {
            try await PostgresCatalog.reading(at: location, library: "lib-b") { _ in }
        }
        #expect(try TestPostgres.psql("SELECT string_agg(identity, ',') FROM cairn.catalog_library",
                                      database: location.database) == "lib-a")

        // A catalog one migration behind this cairn is not read with today's queries.
        let newest = try TestPostgres.psql("SELECT max(version) FROM cairn_catalog_migration", database: location.database)
        _ = try TestPostgres.psql("DELETE FROM cairn_catalog_migration WHERE version = \(newest)", database: location.database)
        await #expect(throws: PostgresCatalogError.olderSchema(location: location.description)) {
            try await PostgresCatalog.reading(at: location, library: "lib-a") { _ in }
        }
    }
}
