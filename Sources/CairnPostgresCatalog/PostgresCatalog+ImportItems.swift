import CairnCatalog
import CairnCore
import Foundation
import PostgresNIO

/// The import items in PostgreSQL, as `ItemCatalog` describes them. A batch is one statement: its rows travel as
/// one JSON array that `jsonb_to_recordset` unpacks (nullable columns included, which PostgreSQL's array binds
/// cannot carry). In-flight marks and state saves run at once on two connections, and both lock their rows in id
/// order first (`locked`): neither can then hold a row the other waits for while it waits for one the other holds.
extension PostgresCatalog: ItemCatalog {
    typealias State = ItemState.Name

    public func sourceID(forRoot rootPath: String) async throws -> Int64 {
        return try await failing("register the source \(rootPath)") { [self] in
            // The no-op update makes RETURNING name the row that was already there.
            let rows = try await client.query("""
                INSERT INTO cairn.source (root_path) VALUES (\(rootPath))
                ON CONFLICT (root_path) DO UPDATE SET root_path = excluded.root_path RETURNING id
                """, logger: logger)
            for try await id in rows.decode(Int64.self) { return id }
            throw PostgresCatalogError.missingRow("source \(rootPath)")
        }
    }

    public func planImportItems(_ items: [ImportItem], sourceID: Int64) async throws -> [ItemRecord] {
        guard !items.isEmpty else { return [] }
        return try await failing("plan \(items.count) import items") { [self] in
            // One row per content: an insert may not touch a row twice, and a content planned twice is one item (its
            // last sighting, at its first place: new rows get their ids in the order given).
            let planned = items.lastOfEach(by: \.checksum)
            let checksums = planned.map(\.checksum.hex), paths = planned.map(\.relativePath)
            let kinds = planned.map(\.kind.rawValue), sizes = planned.map(\.byteCount)
            let terminal = "(\(ItemSQL.terminal) AND NOT \(ItemSQL.crashFailed))"
            func restart(_ column: String, _ fresh: String) -> String {
                "\(column) = CASE WHEN \(terminal) THEN \(fresh) ELSE i.\(column) END"
            }
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                WITH planned AS (
                  INSERT INTO cairn.import_item AS i (sha1, source_id, relative_path, kind, size, state)
                  SELECT x.sha1, $2, x.relative_path, x.kind, x.size, '\(State.placeholder.rawValue)'
                  FROM unnest($1::text[], $3::text[], $4::text[], $5::bigint[])
                    WITH ORDINALITY AS x(sha1, relative_path, kind, size, n)
                  ORDER BY x.n
                  ON CONFLICT (sha1) DO UPDATE SET
                    source_id = excluded.source_id, relative_path = excluded.relative_path, kind = excluded.kind,
                    size = excluded.size, updated_at = now(),
                    \(restart("state", "'\(State.placeholder.rawValue)'")), \(restart("phase", "NULL")),
                    \(restart("operation", "NULL")), \(restart("reason", "NULL")), \(restart("category", "NULL")),
                    \(restart("attempts", "0")),
                    \(restart("crash_count", "0")), \(restart("kill_count", "0")), \(restart("duplicate", "false")),
                    \(restart("retryable", "false"))
                  RETURNING i.*)
                SELECT \(ItemSQL.columns.replacingOccurrences(of: "i.", with: "p."))
                FROM planned p JOIN cairn.source s ON s.id = p.source_id LEFT JOIN cairn.asset a ON a.sha1 = p.sha1
                """, binds: try Self.binds(checksums, sourceID, paths, kinds, sizes)), logger: logger)
            var byChecksum: [Checksum: ItemRecord] = [:]
            for try await row in rows {
                let record = try ItemRecord(from: PostgresRowDecoder(row))
                byChecksum[record.item.checksum] = record
            }
            return try items.map { item in
                guard var record = byChecksum[item.checksum] else { throw PostgresCatalogError.missingRow("import item \(item.checksum)") }
                record.item.relativePath = item.relativePath
                record.item.sourceRoot = item.sourceRoot
                return record
            }
        }
    }

    public func saveImportItemStates(_ records: [ItemRecord], with rows: StageRows) async throws {
        guard !records.isEmpty || !rows.isEmpty else { return }
        return try await failing("save \(records.count) item states") { [self] in
            let states = SavedStates(ItemRecord.latestPerItem(records))
            try await client.withTransaction(logger: logger) { connection in
                try await Self.saveStageRows(rows, on: connection, logger: logger)
                guard !records.isEmpty else { return }
                try await connection.query("""
                    WITH locked AS MATERIALIZED (
                      SELECT id FROM cairn.import_item WHERE id = ANY(\(states.ids)::bigint[]) ORDER BY id FOR UPDATE)
                    UPDATE cairn.import_item i SET state = x.state, phase = NULLIF(x.phase, ''),
                      operation = NULLIF(x.operation, ''), reason = NULLIF(x.reason, ''),
                      category = NULLIF(x.category, ''), attempts = x.attempts,
                      retryable = x.retryable, in_flight = x.in_flight, in_flight_alone = x.in_flight_alone,
                      crash_count = x.crash_count, kill_count = x.kill_count, duplicate = x.duplicate, updated_at = now()
                    FROM unnest(\(states.ids)::bigint[], \(states.states)::text[], \(states.phases)::text[],
                      \(states.operations)::text[], \(states.reasons)::text[], \(states.categories)::text[],
                      \(states.attempts)::bigint[],
                      \(states.retryable)::boolean[], \(states.inFlight)::boolean[], \(states.inFlightAlone)::boolean[],
                      \(states.crashCounts)::bigint[], \(states.killCounts)::bigint[], \(states.duplicate)::boolean[])
                      AS x(id, state, phase, operation, reason, category, attempts, retryable, in_flight, in_flight_alone,
                        crash_count, kill_count, duplicate), locked l
                    WHERE i.id = l.id AND x.id = l.id
                    """, logger: logger)
            }
        }
    }

    public func markImportItemsInFlight(_ marks: [InFlightMark]) async throws {
        guard !marks.isEmpty else { return }
        return try await failing("mark \(marks.count) items in flight") { [self] in
            let statement = MarkInFlight(ids: marks.map(\.id.rawValue),
                                         alone: marks.filter(\.alone).map(\.id.rawValue))
            for try await _ in try await client.execute(statement, logger: logger) {}
        }
    }

    /// Each save of marks is a round trip and a transaction on the server, which shares the machine's cores with
    /// the decoders: marks gather briefly, so one save carries many.
    public var inFlightMarkLinger: Duration { .milliseconds(2) }

    public func importItemsInFlight() async throws -> [ItemRecord] { try await items(where: "i.in_flight") }

    public func importItemsOwingDerivatives() async throws -> Int {
        return try await failing("count the items that owe derivatives") { [self] in
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT count(*) FROM cairn.import_item i WHERE NOT \(ItemSQL.terminal) AND NOT \(ItemSQL.owingTransfer)
                """), logger: logger)
            for try await count in rows.decode(Int.self) { return count }
            return 0
        }
    }

    public func retryCrashFailedImportItems(sourceID: Int64) async throws -> Int {
        return try await failing("retry the items the crash-loop guard failed") { [self] in
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                UPDATE cairn.import_item i SET retryable = true, attempts = 0, crash_count = 0, kill_count = 0,
                  updated_at = now()
                WHERE i.source_id = $1 AND \(ItemSQL.crashFailed) RETURNING i.id
                """, binds: try Self.binds(sourceID)), logger: logger)
            var count = 0
            for try await _ in rows { count += 1 }
            return count
        }
    }

    /// `condition` names `import_item i`'s columns; rows by id.
    func items(where condition: String) async throws -> [ItemRecord] {
        return try await failing("read import items") { [self] in
            try await client.query(Self.itemsQuery(where: condition), logger: logger).records(ItemRecord.self)
        }
    }

    /// The items matching `condition` (on `import_item i`'s columns, with `binds`), by id, up to `limit`.
    static func itemsQuery(where condition: String, binds: PostgresBindings = PostgresBindings(), limit: Int? = nil)
        -> PostgresQuery {
        PostgresQuery(unsafeSQL: """
            SELECT \(ItemSQL.columns)
            FROM cairn.import_item i JOIN cairn.source s ON s.id = i.source_id LEFT JOIN cairn.asset a ON a.sha1 = i.sha1
            WHERE \(condition) ORDER BY i.id\(limit.map { " LIMIT \($0)" } ?? "")
            """, binds: binds)
    }

    /// Binds for a statement written with `$1`, `$2`…, in order.
    static func binds(_ values: any PostgresEncodable & Sendable...) throws -> PostgresBindings {
        var binds = PostgresBindings()
        for value in values { try binds.append(value) }
        return binds
    }

    /// A batch of rows as the JSON array `jsonb_to_recordset` reads, through the rows' own codecs (their coding
    /// keys are the columns), times as seconds since 1970 for `to_timestamp`.
    static func json(_ rows: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return String(decoding: try encoder.encode(rows), as: UTF8.self)
    }
}

/// Items' states and bookkeeping as a save writes them, a column each for `unnest` (the columns of
/// `ItemState.storedColumns` and the record's; "" stands for no phase, operation, reason or category).
private struct SavedStates {
    var ids: [Int64] = [], states: [String] = [], phases: [String] = [], operations: [String] = []
    var reasons: [String] = [], categories: [String] = [], attempts: [Int] = [], retryable: [Bool] = [], inFlight: [Bool] = []
    var inFlightAlone: [Bool] = [], crashCounts: [Int] = [], killCounts: [Int] = [], duplicate: [Bool] = []

    init(_ records: [ItemRecord]) {
        for record in records {
            let stored = record.state.storedColumns
            ids.append(record.id.rawValue)
            states.append(stored.state)
            phases.append(stored.phase ?? "")
            operations.append(stored.operation ?? "")
            reasons.append(stored.reason ?? "")
            categories.append(stored.category ?? "")
            attempts.append(stored.attempts)
            retryable.append(stored.retryable)
            inFlight.append(record.inFlight)
            inFlightAlone.append(record.runsAlone)
            crashCounts.append(record.crashCount)
            killCounts.append(record.killCount)
            duplicate.append(record.isDuplicate)
        }
    }
}

/// In-flight marks, the import's most frequent statement: prepared, so the server parses and plans it once per
/// connection; committed without waiting for the write-ahead log's flush (`synchronous_commit` off for its own
/// transaction), since a mark has to outlive this process, not the server, and the next save's commit flushes it
/// anyway.
private struct MarkInFlight: PostgresPreparedStatement {
    static let sql = """
        WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true)),
        locked AS MATERIALIZED (
          SELECT id FROM cairn.import_item WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE)
        UPDATE cairn.import_item i SET in_flight = true, in_flight_alone = i.id = ANY($2::bigint[])
        FROM locked l, unflushed WHERE i.id = l.id
        """
    typealias Row = Void

    /// The items to mark; `alone`: those of them that run alone (crash suspects).
    var ids: [Int64], alone: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(ids)
        bindings.append(alone)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}
}
