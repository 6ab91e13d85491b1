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
        let catalog = self.catalog, groupCommit = self.groupCommit
        try await BlockingWork.run {
            let rows = try groupCommit?.takeDurableRows() ?? StageRows()
            try catalog.saveImportItemStates(records, with: rows)
        }
    }

    /// One small transaction with no sync: a mark only has to outlive a crash of this process, and it points at no
    /// file (the rows that do wait for `save`'s sync).
    public func saveMarks(_ marks: [InFlightMark]) async throws {
        let catalog = self.catalog
        try await BlockingWork.run { try catalog.markImportItemsInFlight(marks) }
    }

    /// Records earlier runs left unfinished or in flight, by id, read row by row (there may be many thousands).
    /// `owingTransfer`: only those whose original is not in place yet (an archive-only run).
    public func unfinished(owingTransfer: Bool = false) throws -> [ItemRecord] {
        var records: [ItemRecord] = []
        try catalog.forEachUnfinishedImportItem(owingTransfer: owingTransfer) { records.append($0) }
        return records
    }

    /// Plans `newItems` in the catalog and returns what this run takes on: the items earlier runs left unfinished
    /// and the planned ones, as the catalog returned them (with the ids their inserts gave them), by id. A planned
    /// checksum an earlier run left unfinished is one item, in the state it stood in.
    public func plan(_ newItems: [ImportItem], sourceID: Int64, owingTransfer: Bool) throws -> [ItemRecord] {
        var records = try unfinished(owingTransfer: owingTransfer)
        records.reserveCapacity(records.count + newItems.count)
        var earlier = [ItemID: Int](minimumCapacity: records.count)
        for (index, record) in records.enumerated() { earlier[record.id] = index }
        var sorted = true
        for record in try planNew(newItems, sourceID: sourceID, owingTransfer: owingTransfer) {
            if let index = earlier[record.id] {
                records[index] = record
            } else {
                sorted = sorted && (records.last.map { $0.id < record.id } ?? true)
                records.append(record)
            }
        }
        if !sorted { records.sort { $0.id < $1.id } }
        return records
    }

    /// Plans `newItems` in the catalog and returns the records this run takes on, as the catalog returned them.
    /// `owingTransfer`: only those whose original is not in place yet (an archive-only run). An item the crash-loop
    /// guard failed stays failed, left out here: the run reports it.
    public func planNew(_ newItems: [ImportItem], sourceID: Int64, owingTransfer: Bool) throws -> [ItemRecord] {
        var records = try catalog.insertImportItems(newItems, sourceID: sourceID)
        if owingTransfer { records.removeAll { !$0.state.owesTransfer } }
        records.removeAll(where: CrashLoopGuard.failedIt)
        return records
    }
}
