import CairnCatalog
import CairnCore
import CairnQueue
import Foundation
import Logging
import PostgresNIO

/// A library's catalog in PostgreSQL, for a library that several hosts work on (its folder shared over NFS or the
/// like, where SQLite must not live): the same records as the SQLite catalog, in the schema `cairn` of one
/// database, which belongs to one library. So far it holds sources and their snapshots, the import items and what
/// their stages made, runs, and the reconciliation stores (`ItemCatalog`, `SnapshotCatalog`, `RunCatalog`,
/// `ReconcileCatalog`); the rest of the catalog follows behind the same contract suite.
public final class PostgresCatalog: Sendable {
    /// The library this catalog belongs to (its identity, as the queue names it).
    public let library: String
    let client: PostgresClient
    let logger = Logger(label: "cairn.catalog", factory: { _ in SwiftLogNoOpLogHandler() })

    init(library: String, client: PostgresClient) {
        self.library = library
        self.client = client
    }

    /// Connects to `location`, brings the schema up to date, checks that the database holds `library`'s catalog
    /// (or none yet: it becomes `library`'s) and runs `body` with it; the connections close when `body` returns.
    public static func withCatalog<Result: Sendable>(at location: PostgresLocation, library: String,
                                                     _ body: (PostgresCatalog) async throws -> Result) async throws -> Result {
        let client = PostgresClient(configuration: location.clientConfiguration())
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let catalog = PostgresCatalog(library: library, client: client)
            try await CatalogSchema.migrations.apply(client, logger: catalog.logger)
            try await catalog.claim(location: location)
            return try await body(catalog)
        }
    }

    /// Runs `body`, its errors named for `operation` in one line that helps (postgres-nio's own description says
    /// nothing, on purpose).
    func failing<Value>(_ operation: String, _ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch let error as PostgresCatalogError {
            throw error
        } catch {
            throw PostgresCatalogError.failed(operation: operation, reason: WorkQueueError.describe(error))
        }
    }

    /// Makes the database `library`'s, or checks that it is: a catalog holds one library's records, and one
    /// opened for another library would mix two libraries' items.
    private func claim(location: PostgresLocation) async throws {
        let rows = try await client.query("""
            WITH claimed AS (
              INSERT INTO cairn.catalog_library (identity) VALUES (\(library)) ON CONFLICT DO NOTHING RETURNING identity)
            SELECT identity FROM claimed UNION ALL SELECT identity FROM cairn.catalog_library
            """, logger: logger)
        for try await owner in rows.decode(String.self) where owner != library {
            throw PostgresCatalogError.otherLibrary(owner: owner, library: library, location: location.description)
        }
    }
}

public enum PostgresCatalogError: Error, CustomStringConvertible, Equatable {
    /// The database holds another library's catalog.
    case otherLibrary(owner: String, library: String, location: String)
    /// A statement that returns a row returned none (the catalog changed under the call).
    case missingRow(String)
    /// The server or the connection failed an operation; `reason` is PostgreSQL's word, never the password.
    case failed(operation: String, reason: String)

    public var description: String {
        switch self {
        case .otherLibrary(let owner, let library, let location):
            "the catalog at \(location) belongs to the library \(owner), not to \(library): give each library a database of its own"
        case .missingRow(let what):
            "the catalog returned no row for \(what)"
        case .failed(let operation, let reason):
            "the catalog could not \(operation): \(reason)"
        }
    }
}

/// The catalog's tables in PostgreSQL: the SQLite catalog's columns, with PostgreSQL's types (booleans, `bigint`
/// ids, `timestamptz`). Shipped migrations are never edited.
enum CatalogSchema {
    static let migrations = PostgresMigrations(name: "cairn_catalog", migrations: [
        (1, [
            "CREATE SCHEMA IF NOT EXISTS cairn",
            // One row: the library whose catalog this is.
            """
            CREATE TABLE cairn.catalog_library (
              one boolean PRIMARY KEY DEFAULT true CHECK (one),
              identity text NOT NULL,
              created_at timestamptz NOT NULL DEFAULT now())
            """,
            """
            CREATE TABLE cairn.source (
              id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
              root_path text NOT NULL UNIQUE,
              created_at timestamptz NOT NULL DEFAULT now())
            """,
            """
            CREATE TABLE cairn.asset (
              sha1 text PRIMARY KEY,
              kind text NOT NULL,
              size bigint NOT NULL,
              original_extension text NOT NULL,
              first_source_path text NOT NULL,
              original_path text NOT NULL,
              imported_at timestamptz NOT NULL,
              run_id text,
              no_preview_reason text)
            """,
            """
            CREATE TABLE cairn.import_item (
              id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
              sha1 text NOT NULL UNIQUE,
              source_id bigint NOT NULL REFERENCES cairn.source (id),
              relative_path text NOT NULL,
              kind text NOT NULL,
              size bigint NOT NULL,
              state text NOT NULL,
              phase text,
              operation text,
              reason text,
              attempts integer NOT NULL DEFAULT 0,
              retryable boolean NOT NULL DEFAULT false,
              in_flight boolean NOT NULL DEFAULT false,
              in_flight_alone boolean NOT NULL DEFAULT false,
              crash_count integer NOT NULL DEFAULT 0,
              kill_count integer NOT NULL DEFAULT 0,
              duplicate boolean NOT NULL DEFAULT false,
              updated_at timestamptz NOT NULL DEFAULT now())
            """,
            "CREATE INDEX import_item_state ON cairn.import_item (state)",
            "CREATE INDEX import_item_in_flight ON cairn.import_item (id) WHERE in_flight",
            """
            CREATE TABLE cairn.media_probe (
              sha1 text PRIMARY KEY,
              container text NOT NULL,
              width integer,
              height integer,
              duration_seconds double precision,
              capture_date timestamptz,
              camera_make text,
              camera_model text,
              latitude double precision,
              longitude double precision,
              altitude double precision,
              codec text,
              probe_json text NOT NULL,
              probed_at timestamptz NOT NULL)
            """,
            """
            CREATE TABLE cairn.derived_file (
              sha1 text NOT NULL,
              role text NOT NULL,
              path text NOT NULL,
              format text NOT NULL,
              width integer NOT NULL,
              height integer NOT NULL,
              byte_count bigint NOT NULL,
              duration_seconds double precision,
              created_at timestamptz NOT NULL,
              PRIMARY KEY (sha1, role))
            """,
        ]),
        (2, [
            // A source's last snapshot: whether each file's content has an asset (`in_library`) spares a rescan
            // the lookup; an asset deleted clears it.
            """
            CREATE TABLE cairn.source_file (
              source_id bigint NOT NULL REFERENCES cairn.source (id) ON DELETE CASCADE,
              relative_path text NOT NULL,
              device bigint NOT NULL,
              inode bigint NOT NULL,
              size bigint NOT NULL,
              mtime_ns bigint NOT NULL,
              sha1 text,
              kind text NOT NULL,
              in_library boolean NOT NULL DEFAULT false,
              PRIMARY KEY (source_id, relative_path))
            """,
            "CREATE INDEX source_file_sha1 ON cairn.source_file (sha1)",
            "CREATE INDEX source_file_not_in_library ON cairn.source_file (source_id) WHERE NOT in_library",
            """
            CREATE FUNCTION cairn.asset_deleted_leaves_library() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              UPDATE cairn.source_file SET in_library = false WHERE sha1 = OLD.sha1;
              RETURN OLD;
            END $$
            """,
            """
            CREATE TRIGGER asset_deleted_leaves_library AFTER DELETE ON cairn.asset
              FOR EACH ROW EXECUTE FUNCTION cairn.asset_deleted_leaves_library()
            """,
            """
            CREATE TABLE cairn.run (
              id text PRIMARY KEY,
              command text NOT NULL,
              source_id bigint REFERENCES cairn.source (id),
              started_at timestamptz NOT NULL,
              ended_at timestamptz,
              outcome text NOT NULL,
              message text,
              counts jsonb NOT NULL,
              summary text)
            """,
            "CREATE INDEX run_started ON cairn.run (started_at)",
            """
            CREATE TABLE cairn.run_failure (
              run_id text NOT NULL REFERENCES cairn.run (id) ON DELETE CASCADE,
              relative_path text NOT NULL,
              phase text NOT NULL,
              reason text NOT NULL)
            """,
            "CREATE INDEX run_failure_run ON cairn.run_failure (run_id)",
        ]),
        (3, [
            // The reconciliation stores, per source.
            """
            CREATE TABLE cairn.reconcile_observed (
              source_id bigint NOT NULL REFERENCES cairn.source (id) ON DELETE CASCADE,
              sha1 text NOT NULL,
              PRIMARY KEY (source_id, sha1))
            """,
            """
            CREATE TABLE cairn.reconcile_confirmed (
              source_id bigint NOT NULL REFERENCES cairn.source (id) ON DELETE CASCADE,
              sha1 text NOT NULL,
              confirmed_at timestamptz NOT NULL,
              run_id text,
              PRIMARY KEY (source_id, sha1))
            """,
            """
            CREATE TABLE cairn.reconcile_exclusion (
              source_id bigint NOT NULL REFERENCES cairn.source (id) ON DELETE CASCADE,
              sha1 text NOT NULL,
              excluded_at timestamptz NOT NULL,
              PRIMARY KEY (source_id, sha1))
            """,
            """
            CREATE TABLE cairn.reconcile_approval (
              source_id bigint NOT NULL REFERENCES cairn.source (id) ON DELETE CASCADE,
              sha1 text NOT NULL,
              approved_at timestamptz NOT NULL,
              PRIMARY KEY (source_id, sha1))
            """,
            """
            CREATE TABLE cairn.reconcile_anchor (
              source_id bigint NOT NULL REFERENCES cairn.source (id) ON DELETE CASCADE,
              relative_path text NOT NULL,
              sha1 text NOT NULL,
              PRIMARY KEY (source_id, relative_path))
            """,
            """
            CREATE TABLE cairn.reconcile_healthy_snapshot (
              source_id bigint NOT NULL REFERENCES cairn.source (id) ON DELETE CASCADE,
              relative_path text NOT NULL,
              sha1 text NOT NULL,
              PRIMARY KEY (source_id, relative_path))
            """,
            """
            CREATE TABLE cairn.reconcile_source (
              source_id bigint PRIMARY KEY REFERENCES cairn.source (id) ON DELETE CASCADE,
              had_marker boolean NOT NULL DEFAULT false,
              first_run_done boolean NOT NULL DEFAULT false,
              last_sync_run_id text,
              last_healthy_run_id text,
              last_healthy_file_count integer,
              last_healthy_scan_at timestamptz)
            """,
        ]),
    ])
}
