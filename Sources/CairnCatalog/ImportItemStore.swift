import CairnCore
import Foundation
import GRDB

/// An import item is read and written through its one codec (`ItemRecord`'s, in Core): a row of `import_item`
/// with its source's `root_path` and its asset's `original_path`.
extension ItemRecord: FetchableRecord, EncodableRecord, CatalogRecord {}

extension Catalog {
    private typealias State = ItemState.Name

    /// Rows no run will move on by itself: ready, cancelled, or failed without hope of a retry.
    private static let terminalCondition = """
        (state IN ('\(State.ready.rawValue)', '\(State.cancelled.rawValue)') \
        OR (state = '\(State.failed.rawValue)' AND retryable = 0))
        """

    /// Rows the crash-loop guard failed for good: failed while the crash counts it keeps are set (every other outcome
    /// of a phase resets them). A walk that finds their content again leaves them failed unless asked to retry them.
    private static let crashFailedCondition = """
        (state = '\(State.failed.rawValue)' AND retryable = 0 AND (crash_count > 0 OR kill_count > 0))
        """

    /// Rows whose original is not in place yet (`ItemState.owesTransfer`): before or in the transfer, or failed in it.
    private static let owingTransferCondition = """
        (state IN ('\(State.placeholder.rawValue)', '\(State.queued.rawValue)', '\(State.transferring.rawValue)') \
        OR (state = '\(State.failed.rawValue)' AND phase = '\(Lane.transfer.rawValue)'))
        """

    /// The columns an import item is read with, for the join of `import_item i` with `source s` and `asset a`.
    private static let itemSelection = """
        i.id, i.sha1, i.relative_path, s.root_path, i.kind, i.size, a.original_path, i.state, i.phase, i.operation,
        i.reason, i.category, i.attempts, i.retryable, i.in_flight, i.in_flight_alone, i.crash_count, i.kill_count, i.duplicate
        """

    /// The columns an item's save writes: its state's and its bookkeeping.
    private static let savedColumns = ItemState.CodingKeys.allCases.map(\.stringValue)
        + [ItemRecord.CodingKeys.inFlight, .runsAlone, .crashCount, .killCount, .duplicate].map(\.stringValue)

    // MARK: Import items

    /// The upsert that plans one item (see `insertImportItems`). The asset's path is looked up by the bound
    /// checksum, not by `import_item.sha1`: SQLite scans the whole `asset` table for a RETURNING subquery that
    /// names the row being written, which made planning quadratic in the library's size.
    static func planItemSQL(terminal: String) -> String {
        """
        INSERT INTO import_item (sha1, source_id, relative_path, kind, size, state, updated_at)
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
    public func insertImportItems(_ items: [ImportItem], sourceID: Int64, now: Date = Date()) throws -> [ItemRecord] {
        guard !items.isEmpty else { return [] }
        let terminal = "(\(Self.terminalCondition) AND NOT \(Self.crashFailedCondition))"
        return try pool.write { db in
            let upsert = try db.cachedStatement(sql: Self.planItemSQL(terminal: terminal))
            let createdAt = StoredDate.text(now)
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

    /// Up to `limit` items earlier runs left unfinished (or in flight) after item `id`, by id, leaving out content
    /// this run's `RunFileTable` plans as new (the run takes those on with its new content, as one item each).
    /// `owingTransfer`: only items whose original is not in place yet. `table` is not read from Swift: the query
    /// joins its `TEMP` tables on the writer connection, which asking for it guarantees exist.
    public func unfinishedImportItems(after id: ItemID, limit: Int, owingTransfer: Bool,
                                      excludingNewContentOf table: RunFileTable) throws -> [ItemRecord] {
        let condition = Self.unfinishedCondition(owingTransfer: owingTransfer) + """
             AND i.id > ? AND NOT EXISTS (SELECT 1 FROM temp.run_content c WHERE c.sha1 = i.sha1 AND c.in_library = 0)
            """
        return try pool.write { db in
            var result: [ItemRecord] = []
            try Self.forEachImportItem(db, where: condition, arguments: [id.rawValue], limit: limit) { result.append($0) }
            return result
        }
    }

    /// How many items `unfinishedImportItems(after:limit:owingTransfer:excludingNewContentOf:)` pages through.
    public func unfinishedImportItemCount(owingTransfer: Bool, excludingNewContentOf table: RunFileTable) throws -> Int {
        try pool.write { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM import_item i WHERE \(Self.unfinishedCondition(owingTransfer: owingTransfer))
                AND NOT EXISTS (SELECT 1 FROM temp.run_content c WHERE c.sha1 = i.sha1 AND c.in_library = 0)
                """) ?? 0
        }
    }

    private static func unfinishedCondition(owingTransfer: Bool) -> String {
        let unfinished = "(NOT \(terminalCondition) OR in_flight = 1)"
        return owingTransfer ? unfinished + " AND \(owingTransferCondition)" : unfinished
    }

    /// How many items have their original in place and wait for a run with derivatives on (`--derivatives off`
    /// left them, or a run stopped between the transfer and the thumbnail).
    public func importItemsOwingDerivatives() throws -> Int {
        try pool.read { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM import_item
                WHERE NOT \(Self.terminalCondition) AND NOT \(Self.owingTransferCondition)
                """) ?? 0
        }
    }

    /// Every import item, by id.
    public func importItems() throws -> [ItemRecord] {
        try fetchImportItems(where: "1")
    }

    public func importItem(_ checksum: Checksum) throws -> ItemRecord? {
        try fetchImportItems(where: "i.sha1 = ?", arguments: [checksum.hex]).first
    }

    /// Saves item states (and their bookkeeping) in one transaction, with the stages' `rows` first (their files
    /// are durable by now: a group commit); for an id given several times, the last one wins.
    public func saveImportItemStates(_ records: [ItemRecord], with rows: StageRows = StageRows(),
                                     now: Date = Date()) throws {
        guard !records.isEmpty || !rows.isEmpty else { return }
        do { try saveImportItemStates(records, rows, now: now) } catch { throw CatalogError.naming(error, path: path) }
    }

    private func saveImportItemStates(_ records: [ItemRecord], _ rows: StageRows, now: Date) throws {
        let columns = Self.savedColumns
        try pool.write { db in
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
        }
    }

    /// Sets these items' in-flight flags (and whether each runs alone), and nothing else.
    public func markImportItemsInFlight(_ marks: [InFlightMark]) throws {
        guard !marks.isEmpty else { return }
        do {
            try pool.write { db in
                let mark = try db.cachedStatement(sql: "UPDATE import_item SET in_flight = 1, in_flight_alone = ? WHERE id = ?")
                for item in marks { try mark.execute(arguments: [item.alone, item.id.rawValue]) }
            }
        } catch {
            throw CatalogError.naming(error, path: path)
        }
    }

    /// Items marked in flight: what the worker may have been working on when it died.
    public func importItemsInFlight() throws -> [ItemRecord] {
        try fetchImportItems(where: "in_flight = 1")
    }

    /// Items of source `sourceID` the crash-loop guard failed for good whose content this run's walk found, hashed or
    /// unchanged (a file gone from the source is no longer reported), by id. `table` is not read from Swift: the
    /// query joins its `TEMP` tables on the writer connection, which asking for it guarantees exist.
    public func crashFailedImportItems(sourceID: Int64, foundBy table: RunFileTable) throws -> [ItemRecord] {
        let condition = "i.source_id = ? AND \(Self.crashFailedCondition)"
            + " AND EXISTS (SELECT 1 FROM temp.run_file r WHERE r.sha1 = i.sha1)"
        return try pool.write { db in
            var result: [ItemRecord] = []
            try Self.forEachImportItem(db, where: condition, arguments: [sourceID]) { result.append($0) }
            return result
        }
    }

    /// Makes the crash-loop guard's failures of source `sourceID` retryable failures with their crash counts cleared,
    /// so the run takes them up again at their failed phase (`--retry-failed`); returns how many.
    public func retryCrashFailedImportItems(sourceID: Int64, now: Date = Date()) throws -> Int {
        try pool.write { db in
            try db.execute(sql: """
                UPDATE import_item SET retryable = 1, attempts = 0, crash_count = 0, kill_count = 0, updated_at = ?
                WHERE source_id = ? AND \(Self.crashFailedCondition)
                """, arguments: [StoredDate.text(now), sourceID])
            return db.changesCount
        }
    }

    /// `condition` names `import_item` columns, qualified with `i.` where `source s` or `asset a` share the name.
    private func fetchImportItems(where condition: String, arguments: StatementArguments = []) throws -> [ItemRecord] {
        var result: [ItemRecord] = []
        try forEachImportItem(where: condition, arguments: arguments) { result.append($0) }
        return result
    }

    /// Rows one at a time, each source root one string however many items share it.
    private func forEachImportItem(where condition: String, arguments: StatementArguments = [],
                                   _ body: (ItemRecord) throws -> Void) throws {
        try pool.read { db in try Self.forEachImportItem(db, where: condition, arguments: arguments, body) }
    }

    private static func forEachImportItem(_ db: Database, where condition: String, arguments: StatementArguments = [],
                                          limit: Int? = nil, _ body: (ItemRecord) throws -> Void) throws {
        let records = try ItemRecord.fetchCursor(db, sql: """
            SELECT \(itemSelection)
            FROM import_item i JOIN source s ON s.id = i.source_id LEFT JOIN asset a ON a.sha1 = i.sha1
            WHERE \(condition)
            ORDER BY i.id
            """ + (limit.map { " LIMIT \($0)" } ?? ""), arguments: arguments)
        var roots = Set<String>()
        while var record = try records.next() {
            record.item.sourceRoot = roots.insert(record.item.sourceRoot).memberAfterInsert
            try body(record)
        }
    }
}
