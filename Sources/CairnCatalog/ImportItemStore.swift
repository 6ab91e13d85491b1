import CairnCore
import Foundation
import GRDB

/// An import item is read and written through its one codec (`ItemRecord`'s, in Core): a row of `import_item`
/// with its source's `root_path` and its asset's `original_path`.
extension ItemRecord: FetchableRecord, EncodableRecord, CatalogRecord {}

/// What both catalogs ask of `import_item i` in their SQL (SQLite's and PostgreSQL's alike).
package enum ItemSQL {
    private typealias State = ItemState.Name

    /// Rows no run will move on by itself: ready, cancelled, or failed without hope of a retry.
    package static let terminal = """
        (i.state IN ('\(State.ready.rawValue)', '\(State.cancelled.rawValue)') \
        OR (i.state = '\(State.failed.rawValue)' AND NOT i.retryable))
        """

    /// Rows the crash-loop guard failed for good: failed while the crash counts it keeps are set (every other outcome
    /// of a phase resets them). A walk that finds their content again leaves them failed unless asked to retry them.
    package static let crashFailed = """
        (i.state = '\(State.failed.rawValue)' AND NOT i.retryable AND (i.crash_count > 0 OR i.kill_count > 0))
        """

    /// Rows whose original is not in place yet (`ItemState.owesTransfer`): before or in the transfer, or failed in it.
    package static let owingTransfer = """
        (i.state IN ('\(State.placeholder.rawValue)', '\(State.queued.rawValue)', '\(State.transferring.rawValue)') \
        OR (i.state = '\(State.failed.rawValue)' AND i.phase = '\(Lane.transfer.rawValue)'))
        """

    /// An item's columns (`ItemRecord`'s coding keys), for the join of `import_item i` with `source s` and `asset a`.
    package static let columns = """
        i.id, i.sha1, i.relative_path, s.root_path, i.kind, i.size, a.original_path, i.state, i.phase, i.operation,
        i.reason, i.category, i.attempts, i.retryable, i.in_flight, i.in_flight_alone, i.crash_count, i.kill_count, i.duplicate
        """
}

extension SQLiteCatalog {
    private typealias State = ItemState.Name

    /// The columns an item's save writes: its state's and its bookkeeping.
    private static let savedColumns = ItemState.CodingKeys.allCases.map(\.stringValue)
        + [ItemRecord.CodingKeys.inFlight, .runsAlone, .crashCount, .killCount, .duplicate].map(\.stringValue)

    // MARK: Import items

    /// The upsert that plans one item (see `planImportItems`). The asset's path is looked up by the bound
    /// checksum, not by `import_item.sha1`: SQLite scans the whole `asset` table for a RETURNING subquery that
    /// names the row being written, which made planning quadratic in the library's size.
    static func planItemSQL(terminal: String) -> String {
        """
        INSERT INTO import_item AS i (sha1, source_id, relative_path, kind, size, state, updated_at)
        VALUES (?, ?, ?, ?, ?, '\(State.placeholder.rawValue)', ?)
        ON CONFLICT (sha1) DO UPDATE SET
            source_id = excluded.source_id, relative_path = excluded.relative_path,
            kind = excluded.kind, size = excluded.size, updated_at = excluded.updated_at,
            state = CASE WHEN \(terminal) THEN '\(State.placeholder.rawValue)' ELSE state END,
            phase = CASE WHEN \(terminal) THEN NULL ELSE phase END,
            operation = CASE WHEN \(terminal) THEN NULL ELSE operation END,
            reason = CASE WHEN \(terminal) THEN NULL ELSE reason END,
            category = CASE WHEN \(terminal) THEN NULL ELSE category END,
            attempts = CASE WHEN \(terminal) THEN 0 ELSE attempts END,
            crash_count = CASE WHEN \(terminal) THEN 0 ELSE crash_count END,
            kill_count = CASE WHEN \(terminal) THEN 0 ELSE kill_count END,
            duplicate = CASE WHEN \(terminal) THEN 0 ELSE duplicate END,
            retryable = CASE WHEN \(terminal) THEN 0 ELSE retryable END
        RETURNING id, sha1, relative_path, kind, size, state, phase, operation, reason, attempts, retryable,
            in_flight, in_flight_alone, crash_count, kill_count, duplicate,
            (SELECT original_path FROM asset WHERE asset.sha1 = ?) AS original_path,
            ? AS root_path
        """
    }

    /// Plans `items` (found under the root of source `sourceID`) in one transaction and returns them as the catalog
    /// now holds them, with the ids their inserts gave them. A row that already holds a checksum is reused, never
    /// doubled: its location is updated to the new sighting, and when it was finished (ready, cancelled, failed for
    /// good) it starts again as a placeholder; an unfinished row keeps its state, so it resumes where it stood. A row
    /// the crash-loop guard failed stays failed (and is returned so) until `retryCrashFailedImportItems`.
    public func planImportItems(_ items: [ImportItem], sourceID: Int64) async throws -> [ItemRecord] {
        guard !items.isEmpty else { return [] }
        let terminal = "(\(ItemSQL.terminal) AND NOT \(ItemSQL.crashFailed))"
        return try await write { db in
            let upsert = try db.cachedStatement(sql: Self.planItemSQL(terminal: terminal))
            let createdAt = StoredDate.text(Date())
            var records: [ItemRecord] = []
            records.reserveCapacity(items.count)
            for item in items {
                let checksum = item.checksum
                let rows = try Row.fetchCursor(upsert, arguments: [
                    checksum.hex, sourceID, item.relativePath, item.kind.rawValue, item.byteCount, createdAt, checksum.hex,
                    item.sourceRoot,
                ])
                guard let row = try rows.next() else {
                    throw DatabaseError(message: "import_item row for \(checksum.hex) was not returned")
                }
                var record = try ItemRecord(row: row)
                // The caller's strings (the same values), shared with its items rather than one more copy each.
                record.item.sourceRoot = item.sourceRoot
                record.item.relativePath = item.relativePath
                records.append(record)
            }
            return records
        }
    }

    static func unfinishedCondition(owingTransfer: Bool) -> String {
        let unfinished = "(NOT \(ItemSQL.terminal) OR i.in_flight = 1)"
        return owingTransfer ? unfinished + " AND \(ItemSQL.owingTransfer)" : unfinished
    }

    /// How many items have their original in place and wait for a run with derivatives on (`--derivatives off`
    /// left them, or a run stopped between the transfer and the thumbnail).
    public func importItemsOwingDerivatives() async throws -> Int {
        try await read { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM import_item i WHERE NOT \(ItemSQL.terminal) AND NOT \(ItemSQL.owingTransfer)
                """) ?? 0
        }
    }

    public func importItem(_ checksum: Checksum) async throws -> ItemRecord? {
        try await fetchImportItems(where: "i.sha1 = ?", arguments: [checksum.hex]).first
    }

    /// Saves item states (and their bookkeeping) in one transaction, with the stages' `rows` first (their files
    /// are durable by now: a group commit); for an id given several times, the last one wins.
    public func saveImportItemStates(_ records: [ItemRecord], with rows: StageRows) async throws {
        guard !records.isEmpty || !rows.isEmpty else { return }
        let columns = Self.savedColumns, now = Date()
        do { try await write { db in
            try Self.saveStageRows(rows, in: db)
            let update = try db.cachedStatement(sql: """
                UPDATE import_item SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")), updated_at = ?
                WHERE id = ?
                """)
            let updatedAt = StoredDate.text(now)
            for record in ItemRecord.latestPerItem(records) {
                let state = record.state.storedColumns
                // In `savedColumns`' order.
                try update.execute(arguments: [
                    state.state, state.phase, state.operation, state.reason, state.category, state.attempts,
                    state.retryable,
                    record.inFlight, record.runsAlone, record.crashCount, record.killCount, record.isDuplicate,
                    updatedAt, record.id.rawValue,
                ])
            }
        } } catch {
            throw CatalogError.naming(error, path: path)
        }
    }

    /// Sets these items' in-flight flags (and whether each runs alone), and nothing else.
    public func markImportItemsInFlight(_ marks: [InFlightMark]) async throws {
        guard !marks.isEmpty else { return }
        do {
            try await write { db in
                let mark = try db.cachedStatement(sql: "UPDATE import_item SET in_flight = 1, in_flight_alone = ? WHERE id = ?")
                for item in marks { try mark.execute(arguments: [item.alone, item.id.rawValue]) }
            }
        } catch {
            throw CatalogError.naming(error, path: path)
        }
    }

    /// Items marked in flight: what the worker may have been working on when it died.
    public func importItemsInFlight() async throws -> [ItemRecord] {
        try await fetchImportItems(where: "in_flight = 1")
    }

    /// Makes the crash-loop guard's failures of source `sourceID` retryable failures with their crash counts cleared,
    /// so the run takes them up again at their failed phase (`--retry-failed`); returns how many.
    public func retryCrashFailedImportItems(sourceID: Int64) async throws -> Int {
        let now = Date()
        return try await write { db in
            try db.execute(sql: """
                UPDATE import_item AS i SET retryable = 1, attempts = 0, crash_count = 0, kill_count = 0, updated_at = ?
                WHERE i.source_id = ? AND \(ItemSQL.crashFailed)
                """, arguments: [StoredDate.text(now), sourceID])
            return db.changesCount
        }
    }

    /// `condition` names `import_item` columns, qualified with `i.` where `source s` or `asset a` share the name.
    private func fetchImportItems(where condition: String, arguments: StatementArguments = []) async throws -> [ItemRecord] {
        try await read { db in try Self.importItems(db, where: condition, arguments: arguments) }
    }

    /// The items matching `condition`, by id, each source root one string however many items share it.
    static func importItems(_ db: Database, where condition: String, arguments: StatementArguments = [],
                            limit: Int? = nil) throws -> [ItemRecord] {
        let records = try ItemRecord.fetchCursor(db, sql: """
            SELECT \(ItemSQL.columns)
            FROM import_item i JOIN source s ON s.id = i.source_id LEFT JOIN asset a ON a.sha1 = i.sha1
            WHERE \(condition)
            ORDER BY i.id
            """ + (limit.map { " LIMIT \($0)" } ?? ""), arguments: arguments)
        var roots = Set<String>(), result: [ItemRecord] = []
        while var record = try records.next() {
            record.item.sourceRoot = roots.insert(record.item.sourceRoot).memberAfterInsert
            result.append(record)
        }
        return result
    }
}
