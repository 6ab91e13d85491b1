import Logging
import PostgresNIO

/// The queue's tables, as shipped migrations: a change is a new migration, never an edit of one that shipped.
enum QueueSchema {
    static let migrations: [(version: Int, statements: [String])] = [
        (1, [
            """
            CREATE TABLE cairn_worker (
              id uuid PRIMARY KEY,
              host text NOT NULL,
              pid integer NOT NULL,
              started_at timestamptz NOT NULL DEFAULT now(),
              last_beat timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE cairn_job (
              id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
              library text NOT NULL,
              checksum text NOT NULL,
              kind text NOT NULL CHECK (kind IN ('probe', 'thumbnail', 'preview', 'clip')),
              payload text NOT NULL DEFAULT '',
              state text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'running', 'done', 'failed')),
              attempts integer NOT NULL DEFAULT 0,
              max_attempts integer NOT NULL DEFAULT 3,
              run_after timestamptz NOT NULL DEFAULT now(),
              lease_token uuid,
              leased_by uuid,
              lease_expires timestamptz,
              enqueued_at timestamptz NOT NULL DEFAULT now(),
              finished_at timestamptz,
              last_error text,
              CHECK ((state = 'running') = (lease_token IS NOT NULL))
            )
            """,
            // The content address is the job key: one unfinished job per library, content and kind.
            "CREATE UNIQUE INDEX cairn_job_unfinished ON cairn_job (library, checksum, kind) WHERE state IN ('waiting', 'running')",
            "CREATE INDEX cairn_job_ready ON cairn_job (run_after, id) WHERE state = 'waiting'",
            "CREATE INDEX cairn_job_leases ON cairn_job (lease_expires) WHERE state = 'running'",
        ]),
        (2, [
            // What a job made, for whoever waits for it (the importer that records it in its catalog).
            "ALTER TABLE cairn_job ADD COLUMN result text NOT NULL DEFAULT ''",
            // A worker serves one library: its claims look only at that library's ready jobs.
            "CREATE INDEX cairn_job_ready_by_library ON cairn_job (library, run_after, id) WHERE state = 'waiting'",
        ]),
        (3, [
            // A job failed because its input is damaged, as opposed to one whose tries ran out (killed workers,
            // I/O errors): only the first is evidence against the file.
            "ALTER TABLE cairn_job ADD COLUMN damaged boolean NOT NULL DEFAULT false",
        ]),
        (4, [
            // A key's newest job, whatever its state: an enqueue that may reuse a done job looks it up.
            "CREATE INDEX cairn_job_key ON cairn_job (library, checksum, kind, id)",
        ]),
        (5, [
            // Jobs that ended, oldest first: the workers delete those past their keeping time.
            "CREATE INDEX cairn_job_finished ON cairn_job (finished_at) WHERE state IN ('done', 'failed')",
        ]),
        (6, [
            // The last failure's category (`FailureCategory`), for the waiter's catalog, report and metrics.
            "ALTER TABLE cairn_job ADD COLUMN failure_category text",
        ]),
    ]

    /// Brings the schema up to date, one migrator at a time (workers starting together wait for each other).
    static func migrate(_ client: PostgresClient, logger: Logger) async throws {
        try await PostgresMigrations(name: "cairn_queue", migrations: migrations).apply(client, logger: logger)
    }
}
