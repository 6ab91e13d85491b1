import CairnCatalog
import CairnCore
import CairnPipeline

import CairnReconcileOracle
@testable import CairnStages

extension PipelineImport {
    /// Runs `content` through the lanes as the import's own path does (`run(pages:)`), handed over as one page
    /// after what earlier runs left unfinished: for tests that give the pipeline their content directly.
    func run(newItems content: [ImportItem], onEvent: @escaping @Sendable (PipelineEvent) -> Void,
             cancellation: PipelineCancellation) async throws -> PipelineRunResult {
        // These tests run on the SQLite catalog alone.
        guard let sqlite = itemCatalog as? SQLiteCatalog else { preconditionFailure("a test pipeline on SQLite") }
        let pages = PlannedContent(catalog: sqlite, content: content, sourceID: sourceID,
                                   owingTransfer: !configuration.derivativesEnabled)
        var result = try await run(pages: pages, onEvent: onEvent, cancellation: cancellation)
        // A paged run hands the lines of ended items to its pages; the result keeps only the rest.
        result.report.entries = pages.ended.withLock { $0 } + result.report.entries
        return result
    }
}

/// One page: the items earlier runs left unfinished (or in flight), then `content` planned in the catalog, one item
/// per checksum, by id. Keeps the lines of the items that ended, which the scheduler hands back.
private final class PlannedContent: PlannedPageSource {
    let catalog: SQLiteCatalog
    let content: [ImportItem]
    let sourceID: Int64
    let owingTransfer: Bool
    let taken = Locked(false)
    let ended = Locked<[FileOutcomeEntry]>([])
    let refillBelow = 1

    init(catalog: SQLiteCatalog, content: [ImportItem], sourceID: Int64, owingTransfer: Bool) {
        self.catalog = catalog
        self.content = content
        self.sourceID = sourceID
        self.owingTransfer = owingTransfer
    }

    func nextPage(ended: [FileOutcomeEntry]) async throws -> [ItemRecord]? {
        self.ended.withLock { $0 += ended }
        guard taken.withLock({ taken in defer { taken = true }; return !taken }) else { return nil }
        var byID: [ItemID: ItemRecord] = [:]
        for record in try await catalog.importItems() where !record.state.isTerminal || record.inFlight {
            if !owingTransfer || record.state.owesTransfer { byID[record.id] = record }
        }
        let planned = try await CatalogItemStateStore.planNew(content, in: catalog, sourceID: sourceID,
                                                              owingTransfer: owingTransfer)
        for record in planned { byID[record.id] = record }
        return byID.values.sorted { $0.id < $1.id }
    }
}
