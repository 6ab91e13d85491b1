import CairnLibrary
import CairnTesting
import Foundation
import Testing

/// `--destination immich` with `--catalog`: cairn's state for an Immich server and user kept in PostgreSQL (a
/// database of its own), against `immich-double` and the suite's cluster, as real processes. The state's folder
/// gets no SQLite file; it records where its catalog is, so later runs, `restore` and `status` find it without the
/// flag, and the deletion path (quarantine, journal, the run's tag, Immich's trash, restore by run) is the same.
@Suite struct ImmichPostgresCatalogTests {
    @Test func immichsStateLivesInPostgreSQLThroughSyncDeletionAndRestore() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        let (url, location) = try QueueDatabase.fresh()
        func rows(_ sql: String) throws -> String { try TestPostgres.psql(sql, database: location.database) }
        try fixture.writeMedia()

        let first = try fixture.sync(["--catalog", url])
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        let created = try await fixture.double.state()
        #expect(created.assets.count == 7)
        let state = try #require(Self.stateFolders(of: fixture.library).first)
        let layout = LibraryLayout(root: state)
        #expect(!FileManager.default.fileExists(atPath: layout.catalogPath))
        #expect(!FileManager.default.fileExists(atPath: LibraryLayout(root: fixture.library).catalogPath))
        #expect(layout.postgresCatalogNamed == location.description)
        #expect(try rows("SELECT count(*) FROM cairn.asset") == "7")

        // The state's record of its catalog is enough: nothing new is uploaded, and the run is recorded there.
        let second = try fixture.sync()
        #expect(second.status == 0, "\(second.standardOutput)\(second.standardError)")
        #expect(try await fixture.double.state().creations == created.creations)
        #expect(try rows("SELECT string_agg(outcome, ',' ORDER BY started_at) FROM cairn.run") == "success,success")

        // A deletion at the source reaches Immich's trash only after quarantine, tagged with its run.
        for name in ["IMG_0001.JPG", "IMG_0001.MOV"] {
            try FileManager.default.removeItem(atPath: fixture.folder.subpath("src/\(name)"))
        }
        let dry = try fixture.cairn(["dry-run", fixture.source])
        #expect(dry.status == 0 && dry.standardOutput.contains("Dry run of"), "\(dry.standardOutput)\(dry.standardError)")
        #expect(try rows("SELECT count(*) FROM cairn.run") == "2", "a dry run wrote to the catalog")
        #expect(try fixture.sync(["--apply-deletions"]).status == 0)
        #expect(try await fixture.double.state().assets.allSatisfy { !$0.isTrashed }, "trashed before its quarantine")
        let trashed = try fixture.sync(["--apply-deletions", "--quarantine-days", "0"])
        #expect(trashed.status == 0 && trashed.standardOutput.contains("moved 2 assets to Immich's trash"),
                "\(trashed.standardOutput)\(trashed.standardError)")
        let runID = try #require(try rows("SELECT id FROM cairn.run ORDER BY started_at DESC LIMIT 1").nonEmpty)
        let parts = try await fixture.double.state().assets.filter { $0.originalFileName.hasPrefix("IMG_0001") }
        #expect(parts.count == 2 && parts.allSatisfy { $0.isTrashed && $0.tags.contains("cairn/v1/run/\(runID)") })

        let restore = try fixture.cairn(["restore", "--run-id", runID])
        #expect(restore.status == 0 && restore.standardOutput.contains("Restored 2 asset(s)"),
                "\(restore.standardOutput)\(restore.standardError)")
        #expect(try await fixture.double.state().assets.allSatisfy { !$0.isTrashed })
        #expect(try rows("SELECT count(*) FROM cairn.asset") == "7")

        // `status` reads the state where it is; the API key is nowhere in the database.
        let status = try CairnBinary.run(["status", "--library", fixture.library])
        #expect(status.status == 0 && status.standardOutput.contains("Immich destination"), "\(status.standardError)")
        #expect(!FileManager.default.fileExists(atPath: layout.catalogPath))
        let dump = try ExternalTool.run(["pg_dump", "-h", try TestPostgres.socketFolder(), "-U", "postgres", location.database])
        #expect(!dump.isEmpty && !String(decoding: dump, as: UTF8.self).contains(ImmichDestinationTests.key))
        try ImmichDestinationTests.expectNoKey(in: fixture, outputs: [first, second, dry, trashed, restore, status])
    }

    @Test func immichsStateIsNeverMovedNorPutInTheLibrarysDatabase() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        let (url, _) = try QueueDatabase.fresh()
        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/IMG.JPG"), width: 64, height: 48)
        // State kept in SQLite stays there.
        #expect(try fixture.cairn(["import", fixture.source, "--quiet"]).status == 0)
        let moved = try fixture.cairn(["import", fixture.source, "--quiet", "--catalog", url])
        #expect(moved.status == 1 && moved.standardError.contains("its catalog is the SQLite file"), "\(moved.standardError)")

        // A database that holds a library's catalog does not take an Immich state besides.
        let library = fixture.folder.subpath("other")
        let local = try CairnBinary.run(["import", fixture.source, "--library", library, "--catalog", url,
                                         "--quiet", "--clips", "off"])
        #expect(local.status == 0, "\(local.standardError)")
        let shared = try CairnBinary.run(["import", fixture.source, "--library", library, "--quiet", "--catalog", url,
                                          "--destination", "immich", "--immich-url", fixture.double.baseURL],
                                         environment: ["CAIRN_IMMICH_API_KEY": ImmichDestinationTests.key])
        #expect(shared.status == 1 && shared.standardError.contains("give each library a database of its own"),
                "\(shared.standardError)")
        #expect(try await fixture.double.state().assets.count == 1)
        #expect(Self.stateFolders(of: library).allSatisfy { !FileManager.default.fileExists(atPath: LibraryLayout(root: $0).catalogPath) })
    }

    /// `<library>/immich/<server>/<user id>` folders.
    static func stateFolders(of library: String) -> [String] {
        let base = library + "/immich"
        let servers = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        return servers.flatMap { server in
            ((try? FileManager.default.contentsOfDirectory(atPath: base + "/" + server)) ?? []).map { "\(base)/\(server)/\($0)" }
        }
    }
}

private extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
