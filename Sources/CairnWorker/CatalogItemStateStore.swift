import CairnCatalog
import CairnCore
import CairnLibrary
import CairnPipeline

/// The pipeline's `ItemStateStore` backed by the catalog's `import_item` table: each batch is one transaction.
/// With a group commit, the stages' rows queued since the last batch are made durable and written in it too.
public struct CatalogItemStateStore: ItemStateStore {
    public let catalog: Catalog
    let groupCommit: GroupCommit?

    public init(catalog: Catalog) {
        self.init(catalog: catalog, groupCommit: nil)
    }

    init(catalog: Catalog, groupCommit: GroupCommit?) {
        self.catalog = catalog
        self.groupCommit = groupCommit
    }

    public func save(_ records: [ItemRecord]) async throws {
        let updates = records.map { (id: $0.id.rawValue, state: Self.columns(of: $0)) }
        let catalog = self.catalog, groupCommit = self.groupCommit
        try await BlockingWork.run {
            let rows = try groupCommit?.takeDurableRows() ?? StageRows()
            try catalog.saveImportItemStates(updates, with: rows)
        }
    }

    /// Records earlier runs (and this one's placeholders) left unfinished or in flight, by id, with the source
    /// root of each one whose root is not `commonRoot` (the run's own source: most items, not worth an entry
    /// each). Read row by row, with one string per distinct root, since there may be many thousands.
    /// `owingTransfer`: only those whose original is not in place yet (an archive-only run).
    public func unfinished(owingTransfer: Bool = false, commonRoot: String? = nil) throws
        -> (records: [ItemRecord], sourceRoots: [ItemID: String])
    {
        var records: [ItemRecord] = []
        var sourceRoots: [ItemID: String] = [:]
        var roots = Set<String>()
        try catalog.forEachUnfinishedImportItem(owingTransfer: owingTransfer) { row in
            let record = try Self.record(from: row)
            records.append(record)
            if row.sourceRoot != commonRoot { sourceRoots[record.id] = roots.insert(row.sourceRoot).memberAfterInsert }
        }
        return (records, sourceRoots)
    }

    static func columns(of record: ItemRecord) -> ImportItemState {
        let columns = record.state.columns
        return ImportItemState(
            state: columns.state, phase: columns.phase, reason: columns.reason, attempts: columns.attempts,
            retryable: columns.retryable, inFlight: record.inFlight, crashCount: record.crashCount,
            isDuplicate: record.isDuplicate)
    }

    static func record(from row: ImportItemRecord) throws -> ItemRecord {
        let stored = row.state
        let state = try ItemState(columns: ItemStateColumns(
            state: stored.state, phase: stored.phase, reason: stored.reason, attempts: stored.attempts,
            retryable: stored.retryable))
        let item = ImportItem(id: ItemID(row.id), relativePath: row.relativePath, kind: row.kind, byteCount: row.size,
                              checksum: row.checksum)
        return ItemRecord(item: item, state: state, inFlight: stored.inFlight, crashCount: stored.crashCount,
                          isDuplicate: stored.isDuplicate)
    }
}
