import GRDB

/// The catalog's schema history. A shipped migration is never edited: changes come as new migrations.
enum Migrations {
    static let importItemsMigrationName = "v2: import items and media"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: sources, snapshots, assets, runs") { db in
            try db.execute(sql: """
                CREATE TABLE source (
                    id INTEGER PRIMARY KEY,
                    root_path TEXT NOT NULL UNIQUE,
                    created_at DATETIME NOT NULL
                );
                CREATE TABLE source_file (
                    source_id INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                    relative_path TEXT NOT NULL,
                    device INTEGER NOT NULL,
                    inode INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    mtime_ns INTEGER NOT NULL,
                    sha1 TEXT,
                    kind TEXT NOT NULL,
                    PRIMARY KEY (source_id, relative_path)
                ) WITHOUT ROWID;
                CREATE INDEX source_file_sha1 ON source_file(sha1);
                CREATE TABLE asset (
                    sha1 TEXT PRIMARY KEY NOT NULL,
                    kind TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    original_extension TEXT NOT NULL,
                    first_source_path TEXT NOT NULL,
                    original_path TEXT NOT NULL,
                    imported_at DATETIME NOT NULL,
                    run_id TEXT
                ) WITHOUT ROWID;
                CREATE TABLE run (
                    id TEXT PRIMARY KEY NOT NULL,
                    command TEXT NOT NULL,
                    source_id INTEGER REFERENCES source(id),
                    started_at DATETIME NOT NULL,
                    ended_at DATETIME,
                    outcome TEXT NOT NULL,
                    message TEXT,
                    counts TEXT NOT NULL,
                    summary TEXT
                );
                CREATE TABLE run_failure (
                    run_id TEXT NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                    relative_path TEXT NOT NULL,
                    phase TEXT NOT NULL,
                    reason TEXT NOT NULL
                );
                CREATE INDEX run_failure_run ON run_failure(run_id);
                CREATE INDEX run_started ON run(started_at);
                """)
        }
        migrator.registerMigration(importItemsMigrationName) { db in
            try db.execute(sql: """
                CREATE TABLE import_item (
                    id INTEGER PRIMARY KEY,
                    sha1 TEXT NOT NULL UNIQUE,
                    source_id INTEGER NOT NULL REFERENCES source(id),
                    relative_path TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    state TEXT NOT NULL,
                    phase TEXT,
                    reason TEXT,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    retryable INTEGER NOT NULL DEFAULT 0,
                    in_flight INTEGER NOT NULL DEFAULT 0,
                    crash_count INTEGER NOT NULL DEFAULT 0,
                    duplicate INTEGER NOT NULL DEFAULT 0,
                    updated_at DATETIME NOT NULL
                );
                CREATE INDEX import_item_state ON import_item(state);
                CREATE TABLE media_probe (
                    sha1 TEXT PRIMARY KEY NOT NULL,
                    container TEXT NOT NULL,
                    width INTEGER,
                    height INTEGER,
                    duration_seconds REAL,
                    capture_date DATETIME,
                    camera_make TEXT,
                    camera_model TEXT,
                    latitude REAL,
                    longitude REAL,
                    altitude REAL,
                    codec TEXT,
                    probe_json TEXT NOT NULL,
                    probed_at DATETIME NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE derived_file (
                    sha1 TEXT NOT NULL,
                    role TEXT NOT NULL,
                    path TEXT NOT NULL,
                    format TEXT NOT NULL,
                    width INTEGER NOT NULL,
                    height INTEGER NOT NULL,
                    byte_count INTEGER NOT NULL,
                    duration_seconds REAL,
                    created_at DATETIME NOT NULL,
                    PRIMARY KEY (sha1, role)
                ) WITHOUT ROWID;
                """)
        }
        ReconcileMigration.register(in: &migrator)
        migrator.registerMigration("v4: assets kept without preview") { db in
            // Media cairn keeps byte-identical but cannot render here: why, in one line (NULL: it has a preview).
            try db.execute(sql: "ALTER TABLE asset ADD COLUMN no_preview_reason TEXT")
        }
        migrator.registerMigration("v5: Live Photo pairs") { db in
            // A still and its motion part (a Live Photo's movie): one unit for listing, trash and restore.
            try db.execute(sql: """
                CREATE TABLE asset_pair (
                    still_sha1 TEXT PRIMARY KEY NOT NULL,
                    motion_sha1 TEXT NOT NULL UNIQUE,
                    basis TEXT NOT NULL,
                    paired_at DATETIME NOT NULL
                ) WITHOUT ROWID
                """)
        }
        migrator.registerMigration("v6: sidecars") { db in
            // Sidecar files (.xmp, .aae, Takeout .json), stored content-addressed beside the originals and linked
            // to the asset they describe.
            try db.execute(sql: """
                CREATE TABLE sidecar (
                    sha1 TEXT NOT NULL,
                    asset_sha1 TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    path TEXT NOT NULL,
                    source_path TEXT NOT NULL,
                    source_size INTEGER NOT NULL DEFAULT 0,
                    source_mtime_ns INTEGER NOT NULL DEFAULT 0,
                    linked_at DATETIME NOT NULL,
                    PRIMARY KEY (sha1, asset_sha1)
                ) WITHOUT ROWID;
                CREATE INDEX sidecar_asset ON sidecar(asset_sha1);
                CREATE INDEX sidecar_source ON sidecar(source_path);
                """)
        }
        migrator.registerMigration("v7: failure operation") { db in
            // A failed item's reason as a value: the operation that failed apart from the reason (NULL: none
            // named, or a row failed before this column, whose reason holds both).
            try db.execute(sql: "ALTER TABLE import_item ADD COLUMN operation TEXT")
        }
        migrator.registerMigration("v8: snapshot content in library") { db in
            // Whether a snapshot file's content has an asset, so a rescan need not look up (or group) a million
            // unchanged files to learn that they need nothing. Runs set it as they end; losing an asset clears it.
            try db.execute(sql: """
                ALTER TABLE source_file ADD COLUMN in_library INTEGER NOT NULL DEFAULT 0;
                UPDATE source_file SET in_library = 1
                    WHERE sha1 IS NOT NULL AND EXISTS (SELECT 1 FROM asset a WHERE a.sha1 = source_file.sha1);
                CREATE INDEX source_file_not_in_library ON source_file(source_id) WHERE in_library = 0;
                CREATE TRIGGER asset_deleted_leaves_library AFTER DELETE ON asset BEGIN
                    UPDATE source_file SET in_library = 0 WHERE sha1 = OLD.sha1;
                END;
                """)
        }
        migrator.registerMigration("v9: crash evidence") { db in
            // The crash-loop guard tells a crash from a kill and a suspect running alone from one of many in flight.
            try db.execute(sql: """
                ALTER TABLE import_item ADD COLUMN in_flight_alone INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE import_item ADD COLUMN kill_count INTEGER NOT NULL DEFAULT 0;
                """)
        }
        migrator.registerMigration("v10: albums") { db in
            // Albums a source describes (a Google Takeout album folder and its metadata file), keyed by that
            // folder; members are assets, so a photo in two albums, or in an album and a year folder, is one asset.
            try db.execute(sql: """
                CREATE TABLE album (
                    id INTEGER PRIMARY KEY,
                    source_id INTEGER NOT NULL REFERENCES source(id) ON DELETE CASCADE,
                    folder TEXT NOT NULL,
                    title TEXT NOT NULL,
                    description TEXT,
                    date DATETIME,
                    metadata_sha1 TEXT NOT NULL,
                    metadata_path TEXT NOT NULL,
                    metadata_source_path TEXT NOT NULL,
                    updated_at DATETIME NOT NULL,
                    UNIQUE (source_id, folder)
                );
                CREATE INDEX album_title ON album(title);
                CREATE TABLE album_member (
                    album_id INTEGER NOT NULL REFERENCES album(id) ON DELETE CASCADE,
                    asset_sha1 TEXT NOT NULL,
                    added_at DATETIME NOT NULL,
                    PRIMARY KEY (album_id, asset_sha1)
                ) WITHOUT ROWID;
                CREATE INDEX album_member_asset ON album_member(asset_sha1);
                """)
        }
        migrator.registerMigration("v11: failure categories") { db in
            // A failure's category, decided where it happened; NULL for rows written before (read as `other`:
            // their English is not parsed).
            try db.execute(sql: """
                ALTER TABLE import_item ADD COLUMN category TEXT;
                ALTER TABLE run_failure ADD COLUMN category TEXT;
                """)
        }
        migrator.registerMigration("v12: Live Photo links") { db in
            // When the destination linked a pair (NULL: not yet, tried again next run). Pairs made before were
            // linked then, as far as anyone can tell.
            try db.execute(sql: """
                ALTER TABLE asset_pair ADD COLUMN linked_at DATETIME;
                UPDATE asset_pair SET linked_at = paired_at;
                CREATE INDEX asset_pair_awaiting_link ON asset_pair(still_sha1) WHERE linked_at IS NULL;
                """)
        }
        migrator.registerMigration("v13: destination drift") { db in
            // What checks of the destination found of content cairn brought there (trashed or missing there), and
            // when each kind of check last ran.
            try db.execute(sql: """
                CREATE TABLE destination_drift (
                    sha1 TEXT PRIMARY KEY,
                    state TEXT NOT NULL,
                    seen_at DATETIME NOT NULL
                );
                CREATE TABLE destination_check (
                    kind TEXT PRIMARY KEY,
                    checked_at DATETIME NOT NULL
                );
                """)
        }
        migrator.registerMigration("v14: asset remote id") { db in
            // A server's id for an asset (Immich's) in a column of its own; it was kept as `immich:<id>` in
            // original_path, which now names only a file in the folder (empty for an asset the server keeps).
            try db.execute(sql: """
                ALTER TABLE asset ADD COLUMN remote_id TEXT;
                ALTER TABLE trashed_asset ADD COLUMN remote_id TEXT;
                UPDATE asset SET remote_id = substr(original_path, 8), original_path = ''
                    WHERE original_path LIKE 'immich:%';
                UPDATE trashed_asset SET remote_id = substr(original_path, 8), original_path = ''
                    WHERE original_path LIKE 'immich:%';
                """)
        }
        migrator.registerMigration("v15: asset tags") { db in
            // The tags a run gave its new assets (`--tag`, `--session-tag`), by content: a trashed and restored
            // asset keeps them.
            try db.execute(sql: """
                CREATE TABLE asset_tag (
                    sha1 TEXT NOT NULL,
                    tag TEXT NOT NULL,
                    tagged_at DATETIME NOT NULL,
                    PRIMARY KEY (sha1, tag)
                ) WITHOUT ROWID;
                CREATE INDEX asset_tag_by_tag ON asset_tag(tag COLLATE NOCASE);
                """)
        }
        migrator.registerMigration("v16: asset stacks") { db in
            // Shots of one moment kept as one (a RAW and its JPEG, a burst), by content: one row per member, the
            // primary at position 0; an asset is in one stack at most.
            try db.execute(sql: """
                CREATE TABLE asset_stack (
                    member_sha1 TEXT PRIMARY KEY NOT NULL,
                    primary_sha1 TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    basis TEXT NOT NULL,
                    stacked_at DATETIME NOT NULL,
                    linked_at DATETIME
                ) WITHOUT ROWID;
                CREATE INDEX asset_stack_by_primary ON asset_stack(primary_sha1, position);
                """)
        }
        migrator.registerMigration("v17: trashed Takeout JSONs") { db in
            // What a Takeout JSON that put its photo in Google Photos' trash said, by its source path, size and
            // modification time (as `sidecar` knows a linked one): the hold is decided again every run without
            // reading it again.
            try db.execute(sql: """
                CREATE TABLE takeout_trashed (
                    source_path TEXT PRIMARY KEY NOT NULL,
                    source_size INTEGER NOT NULL,
                    source_mtime_ns INTEGER NOT NULL,
                    title TEXT,
                    taken DATETIME
                ) WITHOUT ROWID;
                """)
        }
        return migrator
    }
}
