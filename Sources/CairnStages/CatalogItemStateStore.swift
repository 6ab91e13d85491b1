import CairnCatalog
import CairnCore
import CairnLibrary
import CairnPipeline

/// The pipeline's `ItemStateStore` over a catalog's import items (`ItemCatalog`: the library's SQLite catalog, or a
/// PostgreSQL one): each batch is one commit, with the rows the moves' phases made (`StageRows`). With a group
/// commit, the files those rows point at are made durable first, by one sync; without one, each stage synced its
/// own files.
public struct CatalogItemStateStore: ItemStateStore {
    let catalog: any ItemCatalog
    let groupCommit: GroupCommit?

    public init(catalog: any ItemCatalog) {
        self.init(catalog: catalog, groupCommit: nil)
    }

    init(catalog: any ItemCatalog, groupCommit: GroupCommit?) {
        self.catalog = catalog
        self.groupCommit = groupCommit
    }

    public func save(_ moves: [ItemMove]) async throws {
        var rows = StageRows()
        for move in moves { if let made = move.products as? StageRows { rows.append(made) } }
        if let groupCommit, rows.pointsAtFiles {
            let durable = rows
            try await BlockingWork.run { try groupCommit.makeDurable(durable) }
        }
        // Each item's last record only, taken before the copy out of the moves: a batch moves an item several times.
        try await catalog.saveImportItemStates(moves.lastOfEach(by: \.record.id).map(\.record), with: rows)
    }

    /// One small commit with no sync: a mark only has to outlive a crash of this process, and it points at no
    /// file (the rows that do wait for `save`'s sync).
    public func saveMarks(_ marks: [InFlightMark]) async throws {
        try await catalog.markImportItemsInFlight(marks)
    }

    /// Plans `newItems` in `catalog` and returns the records this run takes on, as the catalog returned
    /// them. `owingTransfer`: only those whose original is not in place yet (an archive-only run). An item the
    /// crash-loop guard failed stays failed, left out here: the run reports it.
    public static func planNew(_ newItems: [ImportItem], in catalog: any ItemCatalog, sourceID: Int64,
                               owingTransfer: Bool) async throws -> [ItemRecord] {
        var records = try await catalog.planImportItems(newItems, sourceID: sourceID)
        if owingTransfer { records.removeAll { !$0.state.owesTransfer } }
        records.removeAll(where: CrashLoopGuard.failedIt)
        return records
    }
}

/// The rows a library stage made: what its item's move carries to the catalog.
extension StageRows: StageProducts {}
