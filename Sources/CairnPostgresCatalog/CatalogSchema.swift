import CairnQueue

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
        (4, [
            // Assets in the library's trash: the asset row as it was, with where its files went (a JSON array).
            """
            CREATE TABLE cairn.trashed_asset (
              sha1 text NOT NULL,
              trash_run_id text NOT NULL,
              trashed_at timestamptz NOT NULL,
              library_paths text NOT NULL,
              kind text NOT NULL,
              size bigint NOT NULL,
              original_extension text NOT NULL,
              first_source_path text NOT NULL,
              original_path text NOT NULL,
              imported_at timestamptz NOT NULL,
              run_id text,
              PRIMARY KEY (sha1, trash_run_id))
            """,
            "CREATE INDEX trashed_asset_run ON cairn.trashed_asset (trash_run_id)",
        ]),
        (5, [
            // What links to assets: Live Photo pairs, sidecars, albums and their members.
            """
            CREATE TABLE cairn.asset_pair (
              still_sha1 text PRIMARY KEY,
              motion_sha1 text NOT NULL UNIQUE,
              basis text NOT NULL,
              paired_at timestamptz NOT NULL)
            """,
            """
            CREATE TABLE cairn.sidecar (
              sha1 text NOT NULL,
              asset_sha1 text NOT NULL,
              kind text NOT NULL,
              path text NOT NULL,
              source_path text NOT NULL,
              source_size bigint NOT NULL DEFAULT 0,
              source_mtime_ns bigint NOT NULL DEFAULT 0,
              linked_at timestamptz NOT NULL,
              PRIMARY KEY (sha1, asset_sha1))
            """,
            "CREATE INDEX sidecar_asset ON cairn.sidecar (asset_sha1)",
            "CREATE INDEX sidecar_source ON cairn.sidecar (source_path)",
            """
            CREATE TABLE cairn.album (
              id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
              source_id bigint NOT NULL REFERENCES cairn.source (id) ON DELETE CASCADE,
              folder text NOT NULL,
              title text NOT NULL,
              description text,
              date timestamptz,
              metadata_sha1 text NOT NULL,
              metadata_path text NOT NULL,
              metadata_source_path text NOT NULL,
              updated_at timestamptz NOT NULL,
              UNIQUE (source_id, folder))
            """,
            "CREATE INDEX album_title ON cairn.album (title)",
            """
            CREATE TABLE cairn.album_member (
              album_id bigint NOT NULL REFERENCES cairn.album (id) ON DELETE CASCADE,
              asset_sha1 text NOT NULL,
              added_at timestamptz NOT NULL,
              PRIMARY KEY (album_id, asset_sha1))
            """,
            "CREATE INDEX album_member_asset ON cairn.album_member (asset_sha1)",
        ]),
        (6, [
            // What waits, as of each source's last sync: what `cairn pending list` shows.
            """
            CREATE TABLE cairn.reconcile_pending (
              source_id bigint NOT NULL REFERENCES cairn.source (id) ON DELETE CASCADE,
              sha1 text NOT NULL,
              status text NOT NULL,
              confirmed_at timestamptz,
              eligible_at timestamptz,
              run_id text NOT NULL,
              PRIMARY KEY (source_id, sha1))
            """,
            "CREATE INDEX reconcile_confirmed_run ON cairn.reconcile_confirmed (run_id)",
        ]),
        (7, [
            // An item's state changes on every save, and an indexed column's change makes PostgreSQL write a new
            // entry in every index of the table; no query finds items by state alone (the run's pages join its own
            // tables by id). Room left in each page keeps the updated row on its page.
            "DROP INDEX cairn.import_item_state",
            "ALTER TABLE cairn.import_item SET (fillfactor = 70)",
        ]),
        (8, [
            // A failure's category, decided where it happened; NULL for rows written before (read as `other`).
            "ALTER TABLE cairn.import_item ADD COLUMN category text",
            "ALTER TABLE cairn.run_failure ADD COLUMN category text",
        ]),
        (9, [
            // When the destination linked a Live Photo pair (NULL: not yet, tried again next run).
            "ALTER TABLE cairn.asset_pair ADD COLUMN linked_at timestamptz",
            "UPDATE cairn.asset_pair SET linked_at = paired_at",
            "CREATE INDEX asset_pair_awaiting_link ON cairn.asset_pair (still_sha1) WHERE linked_at IS NULL",
        ]),
        (10, [
            // What checks of the destination found of content cairn brought there, and when each kind last ran.
            """
            CREATE TABLE cairn.destination_drift (
              sha1 text PRIMARY KEY,
              state text NOT NULL,
              seen_at timestamptz NOT NULL)
            """,
            """
            CREATE TABLE cairn.destination_check (
              kind text PRIMARY KEY,
              checked_at timestamptz NOT NULL)
            """,
        ]),
        (11, [
            // A server's id for an asset (Immich's) in a column of its own, no longer `immich:<id>` in original_path.
            "ALTER TABLE cairn.asset ADD COLUMN remote_id text",
            "ALTER TABLE cairn.trashed_asset ADD COLUMN remote_id text",
            """
            UPDATE cairn.asset SET remote_id = substr(original_path, 8), original_path = ''
              WHERE original_path LIKE 'immich:%'
            """,
            """
            UPDATE cairn.trashed_asset SET remote_id = substr(original_path, 8), original_path = ''
              WHERE original_path LIKE 'immich:%'
            """,
        ]),
        (12, [
            // The tags a run gave its new assets (`--tag`, `--session-tag`), by content.
            """
            CREATE TABLE cairn.asset_tag (
              sha1 text NOT NULL,
              tag text NOT NULL,
              tagged_at timestamptz NOT NULL,
              PRIMARY KEY (sha1, tag))
            """,
        ]),
        (13, [
            // Stacks (a RAW and its JPEG, a burst): one row per member, the primary at position 0.
            """
            CREATE TABLE cairn.asset_stack (
              member_sha1 text PRIMARY KEY,
              primary_sha1 text NOT NULL,
              position integer NOT NULL,
              basis text NOT NULL,
              stacked_at timestamptz NOT NULL,
              linked_at timestamptz)
            """,
            "CREATE INDEX asset_stack_by_primary ON cairn.asset_stack (primary_sha1, position)",
        ]),
        (14, [
            // What a Takeout JSON that put its photo in Google Photos' trash said, by its source path, size and
            // modification time.
            """
            CREATE TABLE cairn.takeout_trashed (
              source_path text PRIMARY KEY,
              source_size bigint NOT NULL,
              source_mtime_ns bigint NOT NULL,
              title text,
              taken timestamptz)
            """,
        ]),
    ])
}
