import Foundation

/// The suite's PostgreSQL: the cluster `scripts/test` started (its socket folder in `CAIRN_TEST_POSTGRES`), or,
/// when a test runs without it (`swift test` alone), one this process starts with `scripts/postgres-cluster` and
/// stops at exit. Each test takes a database of its own, so tests run side by side.
public enum TestPostgres {
    /// The socket folder of the cluster.
    public static func socketFolder() throws -> String { try cluster.get() }

    /// A new, empty database; returns its name.
    public static func freshDatabase(naturalCollation: Bool = false) throws -> String {
        let name = "cairn_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        // The suite's cluster sorts text bytewise (C.UTF-8); a production database usually does not. With
        // `naturalCollation` the database sorts as ICU's en-US does ("a/c" before "a/IMG"), so a query that must
        // order bytewise and forgot to say so fails.
        try psql("CREATE DATABASE \(name)" + (naturalCollation ? " TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'" : ""))
        return name
    }

    /// Runs `sql` as the cluster's superuser (in `database`), returning psql's unaligned output.
    @discardableResult
    public static func psql(_ sql: String, database: String = "postgres") throws -> String {
        let output = try ExternalTool.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", try socketFolder(),
                                           "-U", "postgres", "-d", database, "-c", sql])
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static let cluster: Result<String, any Error> = Result {
        try ScriptedServer.folder(variable: "CAIRN_TEST_POSTGRES", script: script, prefix: "cairn-pg-")
    }

    private static var script: String { ExternalTool.packageRoot + "/scripts/postgres-cluster" }
}
