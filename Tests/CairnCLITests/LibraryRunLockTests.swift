import CairnCore
import CairnLibrary
import CairnQueue
import CairnTesting
import Foundation
import Glibc
import Testing

/// The library's lock in the queue's PostgreSQL: one `cairn import --queue` of a library at a time over every host
/// that mounts it, where each host's `flock` sees only its own mount. A second host is played by a second folder
/// holding the same library identity: its `flock` is another file's, so only PostgreSQL can turn it away.
@Suite struct LibraryRunLockTests {
    let url: String
    let location: PostgresLocation
    let folder: TemporaryDirectory
    let source: String

    init() throws {
        (url, location) = try QueueDatabase.fresh()
        folder = try TemporaryDirectory(prefix: "cairn-runlock")
        source = folder.path + "/source"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        for index in 0..<3 { try MediaFixtures.jpeg(at: "\(source)/IMG_\(index).JPG", width: 640 + 8 * index, height: 480) }
    }

    /// An import that runs none of its jobs and no worker: it holds the library until it is stopped.
    private func startHolder(_ library: String) throws -> ServiceProcess {
        try ServiceProcess(CairnBinary.path, ["import", source, "--library", library, "--plain", "--queue", url, "--work-lanes", "0"],
                           logPath: folder.path + "/holder.log")
    }

    /// The backend pids of sessions holding an advisory lock whose `application_name` names `pid`'s import.
    private func lockSessions(of pid: Int32) throws -> [String] {
        try TestPostgres.psql("""
            SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE 'cairn import (pid \(pid) %'
            """, database: location.database).split(separator: "\n").map(String.init)
    }

    private func waitForLockSession(of pid: Int32, replacing previous: [String] = []) throws -> [String] {
        for _ in 0..<400 {
            let sessions = try lockSessions(of: pid)
            if !sessions.isEmpty && sessions != previous { return sessions }
            usleep(50_000)
        }
        return []
    }

    @Test func anotherHostsImportOfTheLibraryIsTurnedAwayWhileOneRuns() throws {
        let first = folder.path + "/mount-a", second = folder.path + "/mount-b"
        let holder = try startHolder(first)
        defer { holder.stop() }
        let held = try waitForLockSession(of: holder.pid)
        #expect(held.count == 1, "\(holder.output)")

        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: LibraryLayout(root: first).identityPath,
                                         toPath: LibraryLayout(root: second).identityPath)
        let refused = try CairnBinary.run(["import", source, "--library", second, "--plain", "--queue", url])
        #expect(refused.status == ExitStatus.libraryLocked.rawValue, "\(refused.standardError)")
        #expect(refused.standardError.contains("is locked (held in PostgreSQL by cairn import (pid \(holder.pid) on "),
                "\(refused.standardError)")
        #expect(refused.standardError.contains("nothing was done"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: LibraryLayout(root: second).catalogPath))
        // The same library under its own folder's name is turned away by that folder's flock, as ever.
        let sameMount = try CairnBinary.run(["import", source, "--library", first, "--plain", "--queue", url])
        #expect(sameMount.status == ExitStatus.libraryLocked.rawValue, "\(sameMount.standardError)")
        // The holder never lost it, and `cairn queue status` lists it.
        #expect(try lockSessions(of: holder.pid) == held)
        let status = try CairnBinary.run(["queue", "status"], environment: ["CAIRN_QUEUE": url])
        #expect(status.standardOutput.contains("cairn import (pid \(holder.pid) on ") && status.standardOutput.contains(
            ") holds its library's lock, from a local socket, for "), "\(status.standardOutput)")
        let json = try CairnBinary.run(["queue", "status", "--json"], environment: ["CAIRN_QUEUE": url])
        #expect(json.standardOutput.contains("\"imports\":[{\"from\":\"a local socket\",\"heldSeconds\":"), "\(json.standardOutput)")
    }

    @Test func aLockWhoseConnectionEndsIsTakenAgainAndALockLostToAnotherRunStopsTheImport() throws {
        let library = folder.path + "/library"
        let holder = try startHolder(library)
        defer { holder.stop() }
        let held = try waitForLockSession(of: holder.pid)
        #expect(held.count == 1, "\(holder.output)")

        // The connection ended (a network blip, `pg_terminate_backend`): the import takes the lock again.
        try TestPostgres.psql("SELECT pg_terminate_backend(\(held[0]))", database: location.database)
        let again = try waitForLockSession(of: holder.pid, replacing: held)
        #expect(again.count == 1 && again != held, "\(holder.output)")
        #expect(holder.process.isRunning, "\(holder.output)")

        // Another host's run waits for the lock; the connection ends again, and the lock goes to the one waiting
        // before the import is back (PostgreSQL grants a freed lock to its waiters first): the import stops.
        let key = try TestPostgres.psql("""
            SELECT (l.classid::bigint << 32) | l.objid::bigint FROM pg_locks l WHERE l.pid = \(again[0]) AND l.locktype = 'advisory'
            """, database: location.database)
        let other = try ServiceProcess("psql", ["-X", "-q", "-h", try TestPostgres.socketFolder(), "-U", "postgres", "-d", location.database,
                                                "-c", "SELECT pg_advisory_lock(\(key))", "-c", "SELECT pg_sleep(120)"],
                                       environment: ["PGAPPNAME": "the other host"], logPath: folder.path + "/other.log")
        defer { other.send(SIGKILL) }
        var waiting = false
        for _ in 0..<200 where !waiting {
            waiting = try TestPostgres.psql("""
                SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'advisory' AND NOT l.granted AND a.application_name = 'the other host'
                  AND a.datname = current_database()
                """, database: location.database) == "1"
            if !waiting { usleep(50_000) }
        }
        #expect(waiting, "\(other.output)")
        try TestPostgres.psql("SELECT pg_terminate_backend(\(again[0]))", database: location.database)
        #expect(try holder.waitForExit(timeout: 60) == ExitStatus.libraryLocked.rawValue, "\(holder.output)")
        #expect(holder.output.contains("its lock was lost to another run (the other host, connected from a local socket since "),
                "\(holder.output)")
        // The other run ends (its session too: a backend asleep in `pg_sleep` would outlive its client).
        try TestPostgres.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'the other host'",
                              database: location.database)
        _ = try other.waitForExit()
        // What it finished is in the catalog: the next run on this host resumes it.
        let resumed = try CairnBinary.run(["import", source, "--library", library, "--plain", "--queue", url, "--work-lanes", "1"])
        #expect(resumed.status == 0, "\(resumed.standardOutput)\n\(resumed.standardError)")
    }
}
