import CairnCore

/// A catalog's import items and what their stages made (assets, probes, derived files, reasons for no preview), as
/// every catalog backend keeps them: SQLite in the library's folder (`SQLiteCatalog`), PostgreSQL for
/// libraries several hosts work on (`PostgresCatalog`). One contract suite (`CairnCatalogContractTests`) runs on
/// each; the lanes' item store (`CatalogItemStateStore`) writes through it. Async, as the network backend needs.
public protocol ItemCatalog: Sendable {
    /// The id of the source rooted at `rootPath`, registered on first use.
    func sourceID(forRoot rootPath: String) async throws -> Int64

    /// Plans `items` (found under source `sourceID`) and returns them as the catalog now holds them, in the order
    /// given: one row per content, reused and never doubled. Its location follows the new sighting; a finished row
    /// (ready, cancelled, failed for good) starts again as a placeholder, an unfinished one keeps its state, and
    /// one the crash-loop guard failed stays failed.
    func planImportItems(_ items: [ImportItem], sourceID: Int64) async throws -> [ItemRecord]

    /// Saves item states (for an item given several times, the last wins) with the stages' `rows`, in one commit.
    /// The files the rows point at must be durable first.
    func saveImportItemStates(_ records: [ItemRecord], with rows: StageRows) async throws

    /// Sets these items' in-flight flags (and whether each runs alone), and nothing else.
    func markImportItemsInFlight(_ marks: [InFlightMark]) async throws

    /// How long an import lets in-flight marks gather before it saves them (`PipelineConfiguration.gatherMarks`):
    /// a millisecond or two, so one save carries many marks.
    var inFlightMarkLinger: Duration { get }

    /// Items marked in flight: what a run may have been working on when it died.
    func importItemsInFlight() async throws -> [ItemRecord]

    /// How many items have their original in place and still owe derivatives.
    func importItemsOwingDerivatives() async throws -> Int

    /// Makes the crash-loop guard's failures of source `sourceID` retryable with their counts cleared; how many.
    func retryCrashFailedImportItems(sourceID: Int64) async throws -> Int

    func asset(_ checksum: Checksum) async throws -> AssetRecord?
    func mediaProbe(_ checksum: Checksum) async throws -> MediaProbeRecord?
    /// The derived files of one original, by role.
    func derivedFiles(of checksum: Checksum) async throws -> [DerivedFileRecord]

    func assetChecksums() async throws -> Set<Checksum>
    func assetCount() async throws -> Int
    /// Every asset, by checksum.
    func allAssets() async throws -> [AssetRecord]
    /// The assets a run brought in or found at its destination, by checksum.
    func assets(broughtInBy runID: String) async throws -> [AssetRecord]
    /// The probes of a run's assets whose JSON holds `marker` (a sidecar's source, such as "takeout-json").
    func mediaProbes(ofRun runID: String, mentioning marker: String) async throws -> [MediaProbeRecord]
}

extension SQLiteCatalog: ItemCatalog {
    /// A save of marks is a small local commit, but also a hop to the blocking pool and back (two threads woken):
    /// saved as they come, each save carries a handful; gathered for a millisecond, several times as many.
    public var inFlightMarkLinger: Duration { .milliseconds(1) }
}
