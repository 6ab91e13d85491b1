import CairnCore
import Foundation
import GRDB

/// The import items a run takes up beside its walk: the queries join the run's `TEMP` tables, so they run on the
/// catalog's writer connection.
extension RunFileTable {
    /// Up to `limit` items earlier runs left unfinished (or in flight) after item `id`, by id, leaving out content
    /// this run's `RunFileTable` plans as new (the run takes those on with its new content, as one item each).
    /// `owingTransfer`: only items whose original is not in place yet.
    public func unfinishedImportItems(after id: ItemID, limit: Int, owingTransfer: Bool) async throws -> [ItemRecord] {
        let condition = SQLiteCatalog.unfinishedCondition(owingTransfer: owingTransfer) + """
             AND i.id > ? AND NOT EXISTS (SELECT 1 FROM temp.run_content c WHERE c.sha1 = i.sha1 AND c.in_library = 0)
            """
        return try await catalog.write { db in
            try SQLiteCatalog.importItems(db, where: condition, arguments: [id.rawValue], limit: limit)
        }
    }

    /// How many items `unfinishedImportItems(after:limit:owingTransfer:)` pages through.
    public func unfinishedImportItemCount(owingTransfer: Bool) async throws -> Int {
        try await catalog.write { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM import_item i WHERE \(SQLiteCatalog.unfinishedCondition(owingTransfer: owingTransfer))
                AND NOT EXISTS (SELECT 1 FROM temp.run_content c WHERE c.sha1 = i.sha1 AND c.in_library = 0)
                """) ?? 0
        }
    }

    /// Items of this run's source the crash-loop guard failed for good whose content its walk found, hashed or
    /// unchanged (a file gone from the source is no longer reported), by id.
    public func crashFailedImportItems() async throws -> [ItemRecord] {
        let sourceID = self.sourceID
        let condition = "i.source_id = ? AND \(ItemSQL.crashFailed)"
            + " AND (EXISTS (SELECT 1 FROM temp.run_file r WHERE r.sha1 = i.sha1)"
            + " OR EXISTS (SELECT 1 FROM main.source_file s WHERE s.source_id = \(sourceID) AND s.sha1 = i.sha1"
            + " AND \(Self.isSettled("s.relative_path"))))"
        return try await catalog.write { db in try SQLiteCatalog.importItems(db, where: condition, arguments: [sourceID]) }
    }
}
