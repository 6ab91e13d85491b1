import GRDB

/// The reconciliation stores, per source of this library (one catalog per library, so a source id
/// names a (source, library) pair), and the assets moved to the library's trash.
enum ReconcileMigration {
    static let name = "v3: reconciliation stores"

    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration(name) { db in
            try db.execute(sql: """
                CREATE TABLE reconcile_observed (
                    source_id INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                    sha1 TEXT NOT NULL,
                    PRIMARY KEY (source_id, sha1)
                ) WITHOUT ROWID;
                CREATE TABLE reconcile_confirmed (
                    source_id INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                    sha1 TEXT NOT NULL,
                    confirmed_at DATETIME NOT NULL,
                    run_id TEXT,
                    PRIMARY KEY (source_id, sha1)
                ) WITHOUT ROWID;
                CREATE TABLE reconcile_exclusion (
                    source_id INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                    sha1 TEXT NOT NULL,
                    excluded_at DATETIME NOT NULL,
                    PRIMARY KEY (source_id, sha1)
                ) WITHOUT ROWID;
                CREATE TABLE reconcile_approval (
                    source_id INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                    sha1 TEXT NOT NULL,
                    approved_at DATETIME NOT NULL,
                    PRIMARY KEY (source_id, sha1)
                ) WITHOUT ROWID;
                CREATE TABLE reconcile_anchor (
                    source_id INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                    relative_path TEXT NOT NULL,
                    sha1 TEXT NOT NULL,
                    PRIMARY KEY (source_id, relative_path)
                ) WITHOUT ROWID;
                CREATE TABLE reconcile_healthy_snapshot (
                    source_id INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                    relative_path TEXT NOT NULL,
                    sha1 TEXT NOT NULL,
                    PRIMARY KEY (source_id, relative_path)
                ) WITHOUT ROWID;
                CREATE TABLE reconcile_source (
                    source_id INTEGER PRIMARY KEY REFERENCES source(id) ON DELETE CASCADE,
                    had_marker INTEGER NOT NULL DEFAULT 0,
                    first_run_done INTEGER NOT NULL DEFAULT 0,
                    last_sync_run_id TEXT,
                    last_healthy_run_id TEXT,
                    last_healthy_file_count INTEGER,
                    last_healthy_scan_at DATETIME
                );
                CREATE TABLE reconcile_pending (
                    source_id INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                    sha1 TEXT NOT NULL,
                    status TEXT NOT NULL,
                    confirmed_at DATETIME,
                    eligible_at DATETIME,
                    run_id TEXT NOT NULL,
                    PRIMARY KEY (source_id, sha1)
                ) WITHOUT ROWID;
                CREATE TABLE trashed_asset (
                    sha1 TEXT NOT NULL,
                    trash_run_id TEXT NOT NULL,
                    trashed_at DATETIME NOT NULL,
                    library_paths TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    original_extension TEXT NOT NULL,
                    first_source_path TEXT NOT NULL,
                    original_path TEXT NOT NULL,
                    imported_at DATETIME NOT NULL,
                    run_id TEXT,
                    PRIMARY KEY (sha1, trash_run_id)
                ) WITHOUT ROWID;
                CREATE INDEX trashed_asset_run ON trashed_asset(trash_run_id);
                """)
        }
    }
}
