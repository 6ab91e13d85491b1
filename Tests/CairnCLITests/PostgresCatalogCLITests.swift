import CairnCore
import CairnLibrary
import CairnQueue
import CairnTesting
import Foundation
import Testing

/// `cairn import --catalog`: the library's catalog in PostgreSQL, as a real process over the suite's cluster. The
/// library folder (which may be shared over NFS) gets no SQLite catalog; it records where its catalog is, so a run
/// without the flag uses it, and every command reads it there.
@Suite struct PostgresCatalogCLITests {
    let url: String
    let location: PostgresLocation
    let folder: TemporaryDirectory
    let source: String
    let library: String

    init() throws {
        (url, location) = try QueueDatabase.fresh()
        folder = try TemporaryDirectory(prefix: "cairn-pg-catalog")
        source = folder.path + "/source"
        library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: source + "/sub", withIntermediateDirectories: true)
        for index in 0..<3 { try MediaFixtures.jpeg(at: "\(source)/IMG_\(index).JPG", width: 640 + 8 * index, height: 480) }
        try FileManager.default.copyItem(atPath: source + "/IMG_0.JPG", toPath: source + "/sub/copy.JPG")
    }

    func rows(_ sql: String) throws -> String { try TestPostgres.psql(sql, database: location.database) }

    @Test func anImportKeepsItsCatalogInPostgreSQLAndTheLibraryRemembersWhere() throws {
        let first = try CairnBinary.run(["import", source, "--library", library, "--plain", "--catalog", url, "--clips", "off"])
        #expect(first.status == 0, "\(first.standardOutput)\n\(first.standardError)")
        #expect(first.standardOutput.contains("new          3") && first.standardOutput.contains("duplicates   1"),
                "\(first.standardOutput)")
        let layout = LibraryLayout(root: library)
        #expect(!FileManager.default.fileExists(atPath: layout.catalogPath))
        #expect(layout.postgresCatalogNamed == location.description)
        #expect(try rows("SELECT count(*) FROM cairn.asset") == "3")
        #expect(try rows("SELECT count(*) FROM cairn.derived_file WHERE role = 'thumbnail'") == "3")
        #expect(try rows("SELECT count(*) FROM cairn.source_file") == "4")
        let originals = try rows("SELECT original_path FROM cairn.asset").split(separator: "\n")
        #expect(originals.allSatisfy { FileManager.default.fileExists(atPath: layout.absolute(String($0))) })

        // Named by the environment, then by nothing but the library's record of it: nothing to do either time.
        let again = try CairnBinary.run(["import", source, "--library", library, "--plain", "--clips", "off"],
                                        environment: ["CAIRN_CATALOG": url])
        #expect(again.status == 0 && again.standardOutput.contains("unchanged    4"), "\(again.standardOutput)\n\(again.standardError)")
        let recorded = try CairnBinary.run(["import", source, "--library", library, "--plain", "--clips", "off"])
        #expect(recorded.status == 0 && recorded.standardOutput.contains("unchanged    4"),
                "\(recorded.standardOutput)\n\(recorded.standardError)")
        #expect(try rows("SELECT string_agg(outcome, ',') FROM cairn.run WHERE command = 'import'") == "success,success,success")
        #expect(!FileManager.default.fileExists(atPath: layout.catalogPath))

        // `status` reads the catalog where it is, changing nothing.
        let status = try CairnBinary.run(["status", "--library", library, "--json"])
        #expect(status.status == 0, "\(status.standardError)")
        let report = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
        let lastRun = report?["lastRun"] as? [String: Any]
        let state = (lastRun?["status"] as? [String: Any])?["state"] as? String
        let counts = lastRun?["counts"] as? [String: Any]
        #expect(lastRun?["command"] as? String == "import" && state == "success" && counts?["filesSeen"] as? Int == 4,
                "\(status.standardOutput)")
        #expect(try rows("SELECT count(*) FROM cairn.run") == "3")

        // The read side: `ls`, `asset` (by a source path), a dry run, all without writing to the database.
        let before = try rows("SELECT count(*) FROM cairn.run") + "/" + rows("SELECT count(*) FROM cairn.source_file")
        let listing = try CairnBinary.run(["ls", "--library", library, "--json"])
        #expect(listing.status == 0 && listing.standardOutput.split(separator: "\n").count == 3, "\(listing.standardOutput)\n\(listing.standardError)")
        let asset = try CairnBinary.run(["asset", "sub/copy.JPG", "--library", library])
        #expect(asset.status == 0 && asset.standardOutput.contains("source     \(source)/sub/copy.JPG")
                && asset.standardOutput.contains("state      ready"), "\(asset.standardOutput)\n\(asset.standardError)")
        try FileManager.default.removeItem(atPath: source + "/IMG_1.JPG")
        let dry = try CairnBinary.run(["dry-run", source, "--library", library])
        // Imports never reconciled this source: its first sync, dry or not, trashes nothing.
        #expect(dry.status == 0 && dry.standardOutput.contains("Dry run of \(source): 0 to import")
                && dry.standardOutput.contains("held: first run for this source"), "\(dry.standardOutput)\n\(dry.standardError)")
        #expect(try rows("SELECT count(*) FROM cairn.run") + "/" + rows("SELECT count(*) FROM cairn.source_file") == before)

        // A tape selects its clips from the catalog where it is (here one still, by its source path) and makes no
        // SQLite catalog; FFmpeg decodes what it wrote.
        let tape = try CairnBinary.run(["tape", "build", "one", "IMG_2.JPG", "--library", library, "--still-seconds", "1",
                                        "--quiet"])
        #expect(tape.status == 0, "\(tape.standardError)")
        try TapeCommandTests.decodesWithoutError(library + "/tapes/one/playlist.m3u8")
        let shown = try CairnBinary.run(["tape", "show", "one", "--library", library])
        #expect(shown.standardOutput.contains("1 of 1 clips") && shown.standardOutput.contains("IMG_2.JPG"), "\(shown.standardOutput)")
        let removed = try CairnBinary.run(["tape", "remove", "one", "--library", library])
        #expect(removed.status == 0 && !FileManager.default.fileExists(atPath: library + "/tapes/one"), "\(removed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: layout.catalogPath))
    }

    @Test func aRunsMetricsAndTheServedPageReadTheCatalogInPostgreSQL() throws {
        let metricsFile = folder.path + "/cairn.prom"
        let imported = try CairnBinary.run(["import", source, "--library", library, "--quiet", "--catalog", url, "--clips", "off",
                                            "--metrics-file", metricsFile])
        #expect(imported.status == 0, "\(imported.standardError)")
        let labels = "library=\"library\",source=\"source\",kind=\"photo\""
        let written = OperationsTests.metrics(try String(contentsOfFile: metricsFile, encoding: .utf8))
        #expect(written["cairn_library_assets{\(labels)}"] == 3, "\(written)")
        #expect(written["cairn_run_in_progress{library=\"library\",source=\"source\"}"] == 0, "\(written)")

        // `serve` finds the catalog by the library's record of it, and reads it for each request.
        let server = try ServiceProcess(CairnBinary.path, ["serve", "--library", library, "--listen", "127.0.0.1:0"],
                                        logPath: folder.path + "/serve.log")
        defer { server.stop() }
        let base = "http://127.0.0.1:" + (try server.waitForOutput(matching: "on http://127\\.0\\.0\\.1:([0-9]+)/"))
        let status = try HTTPProbe.get(base + "/status.json")
        #expect(status.status == 200 && status.body.contains("\"command\" : \"import\""), "\(status.body)")
        let served = OperationsTests.metrics(try HTTPProbe.get(base + "/metrics").body)
        #expect(served["cairn_library_assets{\(labels)}"] == 3, "\(served)")
        let page = try HTTPProbe.get(base + "/").body
        let sha1 = try #require(page.range(of: "thumbnails/[0-9a-f]{40}", options: .regularExpression).map { String(page[$0]) },
                                "\(page)")
        let thumbnail = try HTTPProbe.get(base + "/" + sha1)
        #expect(thumbnail.status == 200 && thumbnail.body.hasPrefix("RIFF"), "a WebP thumbnail from the library")
        #expect(try rows("SELECT count(*) FROM cairn.derived_file WHERE role = 'thumbnail' AND 'thumbnails/' || sha1 = '\(sha1)'") == "1")
        #expect(!FileManager.default.fileExists(atPath: LibraryLayout(root: library).catalogPath))

        // A catalog that cannot be read is a 503 that says why (here: a database other than the library's).
        let (otherURL, _) = try QueueDatabase.fresh()
        let elsewhere = try ServiceProcess(CairnBinary.path, ["serve", "--library", library, "--listen", "127.0.0.1:0",
                                                              "--catalog", otherURL], logPath: folder.path + "/serve-other.log")
        defer { elsewhere.stop() }
        let other = "http://127.0.0.1:" + (try elsewhere.waitForOutput(matching: "on http://127\\.0\\.0\\.1:([0-9]+)/"))
        let refused = try HTTPProbe.get(other + "/status.json")
        #expect(refused.status == 503 && refused.body.contains("not at"), "\(refused.status) \(refused.body)")

        // `watch --listen` serves the same catalog beside its syncs.
        let watch = try ServiceProcess(CairnBinary.path, ["watch", source, "--library", library, "--quiet", "--debounce", "1",
                                                          "--listen", "127.0.0.1:0"], logPath: folder.path + "/watch.log")
        defer { watch.stop() }
        try watch.waitForOutput(matching: "run 1 \\(startup\\) ended: success", timeout: 120)
        let watched = "http://127.0.0.1:" + (try watch.waitForOutput(matching: "serving on http://127\\.0\\.0\\.1:([0-9]+)/"))
        let outcome = OperationsTests.metrics(try HTTPProbe.get(watched + "/metrics").body)
        #expect(outcome["cairn_last_run_outcome{library=\"library\",source=\"source\",outcome=\"success\"}"] == 1, "\(outcome)")
        #expect(try rows("SELECT count(*) FROM cairn.run WHERE command = 'sync'") == "1")
    }

    @Test func aSyncTrashesThroughPostgreSQLAndPendingRestoreJournalAndPurgeFollow() throws {
        func cairn(_ arguments: [String]) throws -> CairnBinary.Result { try CairnBinary.run(arguments + ["--library", library]) }
        let sync = ["sync", source, "--plain", "--clips", "off"]
        let first = try cairn(sync + ["--catalog", url])
        #expect(first.status == 0, "\(first.standardOutput)\n\(first.standardError)")
        #expect(try rows("SELECT count(*) FROM cairn.asset") == "3")

        // Deleted at the source: quarantined, listed as waiting, approved by a person, then trashed.
        try FileManager.default.removeItem(atPath: source + "/IMG_2.JPG")
        let held = try cairn(sync + ["--apply-deletions"])
        #expect(held.status == 0 && held.standardOutput.contains("quarantined until"), "\(held.standardOutput)\n\(held.standardError)")
        let waiting = try cairn(["pending", "list"])
        let gone = try rows("SELECT sha1 FROM cairn.reconcile_pending")
        #expect(waiting.status == 0 && waiting.standardOutput.contains("quarantine \(gone)  IMG_2.JPG"),
                "\(waiting.standardOutput)\n\(waiting.standardError)")
        let approve = try cairn(["pending", "approve", gone])
        #expect(approve.status == 0, "\(approve.standardError)")
        #expect(try cairn(["pending", "list"]).standardOutput.contains("approved   \(gone)"))
        let second = try cairn(sync + ["--apply-deletions"])
        #expect(second.status == 0, "\(second.standardOutput)\n\(second.standardError)")
        #expect(second.standardOutput.contains("trashed: ") && second.standardOutput.contains("IMG_2.JPG"), "\(second.standardOutput)")
        #expect(try rows("SELECT count(*) FROM cairn.asset") == "2")
        let runID = try rows("SELECT trash_run_id FROM cairn.trashed_asset")
        let trashedOriginal = try rows("SELECT original_path FROM cairn.trashed_asset")
        let layout = LibraryLayout(root: library)
        #expect(!runID.isEmpty && FileManager.default.fileExists(atPath: layout.absolute("trash/\(runID)/\(trashedOriginal)")),
                "\(runID) \(trashedOriginal)")
        let journal = try cairn(["journal", "list"])
        #expect(journal.standardOutput.contains(runID) && journal.standardOutput.contains("trashed 1 asset(s)"),
                "\(journal.standardOutput)\n\(journal.standardError)")
        #expect(!FileManager.default.fileExists(atPath: layout.catalogPath))

        // Restored: the record comes back and the next sync keeps it; then purging removes the emptied run's trash.
        let restore = try cairn(["restore", "--run-id", runID])
        #expect(restore.status == 0 && restore.standardOutput.hasPrefix("Restored 1 asset(s)"),
                "\(restore.standardOutput)\n\(restore.standardError)")
        #expect(try rows("SELECT count(*) FROM cairn.asset") == "3")
        #expect(try rows("SELECT count(*) FROM cairn.trashed_asset") == "0")
        #expect(FileManager.default.fileExists(atPath: layout.absolute(trashedOriginal)))
        let third = try cairn(sync + ["--apply-deletions"])
        #expect(third.status == 0 && !third.standardOutput.contains("trashed: "), "\(third.standardOutput)")
        #expect(try rows("SELECT count(*) FROM cairn.asset") == "3")

        let purge = try cairn(["trash", "purge", "--older-than", "0"])
        #expect(purge.status == 0 && purge.standardOutput.contains("Purged 1 run(s)"), "\(purge.standardOutput)\n\(purge.standardError)")
        #expect(!FileManager.default.fileExists(atPath: layout.absolute("trash/\(runID)")))
        #expect(!FileManager.default.fileExists(atPath: layout.catalogPath))
    }

    @Test func anImportWithACatalogAndAQueueInOneDatabaseRecordsTheWorkersFilesThere() throws {
        // The import runs none of its jobs: a worker on the same database makes every thumbnail, and the import
        // records their files in the catalog beside the queue.
        let importing = try ServiceProcess(CairnBinary.path, ["import", source, "--library", library, "--plain", "--catalog", url,
                                                              "--queue", url, "--work-lanes", "0", "--clips", "off"],
                                           logPath: folder.path + "/import.log")
        let identity = LibraryLayout(root: library).identityPath
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: identity) { usleep(50_000) }
        let worker = try ServiceProcess(CairnBinary.path, ["worker", "--queue", url, "--library", library, "--lanes", "2"],
                                        logPath: folder.path + "/worker.log")
        try worker.waitForOutput(matching: "lanes, queue")
        importing.process.waitUntilExit()
        #expect(importing.process.terminationStatus == 0, "\(importing.output)")
        kill(worker.pid, SIGTERM)
        worker.process.waitUntilExit()
        #expect(worker.output.contains("stopped: 3 done, 0 failed"), "\(worker.output)")

        #expect(try rows("SELECT count(*) FROM cairn.asset") == "3")
        let derived = try rows("SELECT role || ' ' || path FROM cairn.derived_file ORDER BY path").split(separator: "\n")
        #expect(derived.filter { $0.hasPrefix("thumbnail ") }.count == 3, "\(derived)")
        for line in derived { #expect(FileManager.default.fileExists(atPath: library + "/" + line.split(separator: " ")[1])) }
        #expect(try rows("SELECT string_agg(DISTINCT state, ',') FROM cairn.import_item") == "ready")
        #expect(!FileManager.default.fileExists(atPath: LibraryLayout(root: library).catalogPath))
    }

    @Test(arguments: ["import", "sync"])
    func aRunWhoseConnectionsTheServerEndsRunsAgainAndLosesNothing(_ command: String) throws {
        // Every connection ended while the lanes work (`pg_terminate_backend`): the run's working tables went with
        // theirs, so the run cannot finish as it was; it neither hangs nor fails the command, but runs again, and
        // the second try finds the first one's items done, and exits as the first one's damaged file says.
        for index in 3..<16 { try MediaFixtures.jpeg(at: "\(source)/IMG_\(index).JPG", width: 640 + 8 * index, height: 480) }
        try Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(fileURLWithPath: source + "/BROKEN.JPG"))
        let importing = try ServiceProcess(CairnBinary.path, [command, source, "--library", library, "--plain", "--catalog", url],
                                           logPath: folder.path + "/\(command).log")
        // Once the damaged file has failed (its name sorts first, so the lanes hold the rest still): a first try
        // ended before that would leave it to the second, which would then fail it itself.
        _ = try importing.waitForOutput(matching: "error: BROKEN.JPG", timeout: 120)
        let ended = try rows("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                             + "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        importing.process.waitUntilExit()
        #expect(Int(ended) ?? 0 >= 2, "the run's connections: \(ended)")
        #expect(importing.process.terminationStatus == 3, "\(importing.output)")
        #expect(importing.output.contains("running again (1 of 3)"), "\(importing.output)")
        #expect(importing.output.contains("error: BROKEN.JPG"), "\(importing.output)")
        #expect(importing.output.contains("failed       1 in the try before this one"), "\(importing.output)")
        #expect(try rows("SELECT count(*) FROM cairn.asset a JOIN cairn.import_item i ON i.sha1 = a.sha1 "
                         + "WHERE i.state = 'ready'") == "16")
        #expect(try rows("SELECT state || ' ' || count(*) FROM cairn.import_item GROUP BY state ORDER BY state") == "failed 1\nready 16")
        #expect(try rows("SELECT count(*) FROM cairn.derived_file WHERE role = 'thumbnail'") == "16")
        #expect(try rows("SELECT outcome FROM cairn.run ORDER BY started_at DESC LIMIT 1") == "success")
    }

    @Test func aLibraryIsNeverSplitBetweenTwoCatalogs() throws {
        // A library whose catalog is its SQLite file is not moved to PostgreSQL.
        let sqlite = folder.path + "/sqlite-library"
        let local = try CairnBinary.run(["import", source, "--library", sqlite, "--quiet", "--clips", "off"])
        #expect(local.status == 0, "\(local.standardError)")
        let moved = try CairnBinary.run(["import", source, "--library", sqlite, "--quiet", "--catalog", url])
        #expect(moved.status == ExitStatus.failure.rawValue)
        #expect(moved.standardError.contains("its catalog is the SQLite file"), "\(moved.standardError)")
        #expect(try rows("SELECT count(*) FROM pg_namespace WHERE nspname = 'cairn'") == "0", "the database was not claimed")

        // A library in one database is not imported into another.
        let first = try CairnBinary.run(["import", source, "--library", library, "--quiet", "--catalog", url, "--clips", "off"])
        #expect(first.status == 0, "\(first.standardError)")
        let (otherURL, _) = try QueueDatabase.fresh()
        let elsewhere = try CairnBinary.run(["import", source, "--library", library, "--quiet", "--catalog", otherURL])
        #expect(elsewhere.status == ExitStatus.failure.rawValue)
        #expect(elsewhere.standardError.contains("its catalog is in PostgreSQL at \(location.description), not at"),
                "\(elsewhere.standardError)")
    }
}
