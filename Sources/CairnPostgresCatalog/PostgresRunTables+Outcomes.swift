import CairnCatalog
import CairnCore
import PostgresNIO

/// What became of the run's files, and its sidecars. As in SQLite, the tables keep only which items the lanes
/// handled (`run_item`); what became of each is read from where `cairn.import_item` says it stands, through the same
/// row codecs (`HandledItemColumns`, `WalkOutcomeRow`) and so the scheduler's own derivation.
extension PostgresRunTables {
    func recordItems(_ lines: [FileOutcomeEntry]) async throws {
        let handled = lines.compactMap { line in
            line.checksum.map { HandledRow(sha1: $0.hex, leftUnfinished: line.outcome.kind == .unfinished) }
        }.lastOfEach(by: \.sha1)
        guard !handled.isEmpty else { return }
        try await failing("note \(handled.count) items the lanes handled") { [self] in
            let checksums = handled.map(\.sha1), leftUnfinished = handled.map(\.leftUnfinished)
            let logger = logger
            try await execute("CREATE INDEX IF NOT EXISTS run_file_sha1 ON pg_temp.run_file (sha1)")
            try await connection.withTransaction(logger: logger) { connection in
                // Content in the library (an item resumed from an earlier run) is grouped again with all its files,
                // settled ones included, so its outcome goes to its first file.
                try await connection.query(PostgresQuery(unsafeSQL: """
                    INSERT INTO pg_temp.run_content \(Self.groupColumns)
                    \(Self.groups(where: """
                        r.sha1 IN (SELECT h.sha1 FROM unnest($1::text[]) AS h(sha1)
                          WHERE NOT EXISTS (SELECT 1 FROM pg_temp.run_content c WHERE c.sha1 = h.sha1 AND NOT c.in_library))
                        """))
                    ON CONFLICT (sha1) DO UPDATE SET first_id = excluded.first_id, first_size = excluded.first_size,
                      first_hashed = excluded.first_hashed, files = excluded.files, hashed_files = excluded.hashed_files,
                      in_library = excluded.in_library
                    """, binds: try PostgresCatalog.binds(checksums)), logger: logger)
                try await connection.query("""
                    INSERT INTO pg_temp.run_item (sha1, left_unfinished)
                    SELECT h.sha1, h.left_unfinished FROM unnest(\(checksums)::text[], \(leftUnfinished)::boolean[])
                      AS h(sha1, left_unfinished)
                    ON CONFLICT (sha1) DO UPDATE SET left_unfinished = excluded.left_unfinished
                    """, logger: logger)
            }
        }
    }

    func outcomeCounts() async throws -> [FileOutcome.Kind: Int] {
        try await failing("count the run's outcomes") { [self] in
            var counts: [FileOutcome.Kind: Int] = [:]
            for row in try await all(HandledItemsRow.self, """
                SELECT \(RunFileTable.itemColumns), count(*) AS files
                FROM pg_temp.run_item ri JOIN cairn.import_item i ON i.sha1 = ri.sha1
                GROUP BY i.state, i.phase, i.operation, i.reason, i.category, i.attempts, i.retryable, i.duplicate,
                  ri.left_unfinished
                """) {
                counts[row.item.outcome.kind, default: 0] += row.files
            }
            let walk = try await one(WalkCountsRow.self, """
                SELECT count(*) FILTER (WHERE failed) AS failed, count(*) FILTER (WHERE NOT failed AND sha1 IS NULL) AS unread
                FROM pg_temp.run_file
                """)
            counts[.failed, default: 0] += walk.failed
            counts[.unfinished, default: 0] += walk.unread
            // The first file of handled content, or of new content never reached, is not counted here.
            let unhandled = try await one(UnhandledCountsRow.self, """
                SELECT
                  COALESCE(sum(CASE WHEN ri.sha1 IS NOT NULL OR NOT c.in_library THEN c.hashed_files - c.first_hashed::integer
                                    ELSE c.hashed_files END), 0)::float8 AS duplicate,
                  COALESCE(sum(CASE WHEN ri.sha1 IS NOT NULL OR NOT c.in_library
                                    THEN (c.files - c.hashed_files) - (1 - c.first_hashed::integer)
                                    ELSE c.files - c.hashed_files END), 0)::float8 AS unchanged,
                  count(*) FILTER (WHERE ri.sha1 IS NULL AND NOT c.in_library) AS unfinished
                FROM pg_temp.run_content c LEFT JOIN pg_temp.run_item ri ON ri.sha1 = c.sha1
                """)
            counts[.duplicate, default: 0] += Int(unhandled.duplicate)
            counts[.unchanged, default: 0] += Int(unhandled.unchanged)
            counts[.unfinished, default: 0] += unhandled.unfinished
            counts[.unchanged, default: 0] += try await ungroupedFiles()
            return counts.filter { $0.value > 0 }
        }
    }

    func outcomes() async throws -> [FileOutcomeEntry] {
        try await failing("read the run's outcomes") { [self] in
            var entries = try await all(WalkOutcomeRow.self, """
                SELECT r.path, r.sha1 AS walk_sha1, r.hashed, r.failed, r.failure_operation, r.failure_reason,
                  r.failure_category,                   r.id = c.first_id AS is_first, c.in_library, \(RunFileTable.itemColumns)
                FROM pg_temp.run_file r
                LEFT JOIN pg_temp.run_content c ON c.sha1 = r.sha1
                LEFT JOIN pg_temp.run_item ri ON ri.sha1 = r.sha1 AND r.id = c.first_id
                LEFT JOIN cairn.import_item i ON i.sha1 = ri.sha1
                ORDER BY r.id
                """).map(\.entry)
            for row in try await all(HandledItemsRow.self, """
                SELECT \(RunFileTable.itemColumns), i.relative_path, i.sha1 FROM pg_temp.run_item ri
                JOIN cairn.import_item i ON i.sha1 = ri.sha1
                WHERE NOT EXISTS (SELECT 1 FROM pg_temp.run_content c WHERE c.sha1 = ri.sha1)
                ORDER BY i.relative_path COLLATE "C"
                """) {
                entries.append(FileOutcomeEntry(path: row.relativePath ?? "", checksum: row.checksum,
                                                outcome: row.item.outcome))
            }
            return entries
        }
    }

    func failedItems() async throws -> [ImportFailure] {
        try await failing("read the run's failed items") { [self] in
            try await all(HandledItemsRow.self, """
                SELECT \(RunFileTable.itemColumns), i.relative_path FROM pg_temp.run_item ri
                JOIN cairn.import_item i ON i.sha1 = ri.sha1
                WHERE NOT ri.left_unfinished AND i.state = '\(ItemState.Name.failed.rawValue)' ORDER BY i.id
                """).compactMap(\.failure)
        }
    }

    // MARK: Sidecars

    func sidecarsToLink(after last: RunSidecar?, limit: Int) async throws -> [RunSidecar] {
        try await failing("read the sidecars to link") { [self] in
            try await all(RunSidecarRow.self, """
                SELECT folder, path AS relative_path, device, inode, size, mtime_ns, 'other' AS kind
                FROM pg_temp.run_sidecar r
                WHERE (folder COLLATE "C", path COLLATE "C") > ($1::text, $2::text)
                  AND NOT EXISTS (SELECT 1 FROM cairn.sidecar s WHERE s.source_path = r.path
                                  AND s.source_size = r.size AND s.source_mtime_ns = r.mtime_ns)
                ORDER BY folder COLLATE "C", path COLLATE "C" LIMIT $3
                """, PostgresCatalog.binds(last?.folder ?? "", last?.record.relativePath ?? "", limit)).map(\.sidecar)
        }
    }

    func checksums(inFolder folder: String) async throws -> [String: Checksum] {
        try await failing("read the checksums of the folder \(folder)") { [self] in
            let rows: [PathChecksumRow]
            if folder.isEmpty {
                rows = try await all(PathChecksumRow.self, """
                    SELECT path AS relative_path, sha1 FROM pg_temp.run_file WHERE sha1 IS NOT NULL AND strpos(path, '/') = 0
                    """)
            } else {
                try await execute("CREATE INDEX IF NOT EXISTS run_file_path ON pg_temp.run_file (path COLLATE \"C\")")
                let range = RunSidecar.pathRange(under: folder)
                rows = try await all(PathChecksumRow.self, """
                    SELECT path AS relative_path, sha1 FROM pg_temp.run_file
                    WHERE path COLLATE "C" > $1 AND path COLLATE "C" < $2 AND sha1 IS NOT NULL
                    """, PostgresCatalog.binds(range.after, range.before))
            }
            var result: [String: Checksum] = [:]
            for row in rows where RunSidecar.isDirectly(in: folder, row.relativePath) {
                if let checksum = Checksum(hex: row.sha1) { result[row.relativePath] = checksum }
            }
            return result
        }
    }
}

/// An item the lanes handled, by checksum.
private struct HandledRow {
    var sha1: String
    var leftUnfinished: Bool
}
