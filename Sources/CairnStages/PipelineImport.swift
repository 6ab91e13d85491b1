import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMedia
import CairnPipeline

/// A handle a signal handler can trigger: the first `cancel(deadline:)` stops new work and lets phases in
/// flight finish within the deadline; a second one abandons them at once. Safe to call before the run
/// starts (the run then starts stopped) and from any thread.
public final class PipelineCancellation: Sendable {
    private struct State {
        var scheduler: PipelineScheduler?
        var requests = 0
        var deadline: Duration?
    }

    private let state = Locked(State())
    /// Set by the first `cancel`: the hashing stops within a read (it leaves nothing half done: a file not hashed is
    /// read again next run).
    public let interrupt = Interrupt()

    /// How long phases in flight get to finish after a first stop (SIGINT, SIGTERM, a cancelled task).
    public static let defaultDeadline: Duration = .seconds(5)

    public init() {}

    /// Runs `body` (a whole run) so that cancelling the calling task stops it as a first SIGINT does: the walk and the
    /// hashing stop at once, phases in flight get `deadline`, and what the run finished is still written. The run is
    /// its own tree for that reason: inside a cancelled tree every sleep, stream and pool wait would end at once,
    /// and the record writer with them.
    package func stoppingOnCancel<Value: Sendable>(
        deadline: Duration = PipelineCancellation.defaultDeadline,
        _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let run = Task { try await body() }
        return try await withTaskCancellationHandler { try await run.value } onCancel: { self.cancel(deadline: deadline) }
    }

    public func cancel(deadline: Duration) {
        interrupt.interrupt()
        let (scheduler, effective): (PipelineScheduler?, Duration) = state.withLock { state in
            state.requests += 1
            let effective = state.requests > 1 ? Duration.zero : deadline
            state.deadline = min(state.deadline ?? effective, effective)
            return (state.scheduler, effective)
        }
        if let scheduler { Task { await scheduler.cancel(deadline: effective) } }
    }

    /// Whether `cancel` was called.
    public var isCancelled: Bool { state.withLock { $0.requests > 0 } }

    /// Forwards later cancels to `scheduler`, and an earlier one now, before its run starts.
    func attach(_ scheduler: PipelineScheduler) async {
        let pending = state.withLock { state -> Duration? in
            state.scheduler = scheduler
            return state.deadline
        }
        if let pending { await scheduler.cancel(deadline: pending) }
    }
}

/// The importing phase of `cairn import`: new content through the transfer, metadata, thumbnail and synthesis
/// lanes, persisted in the catalog's `import_item` table so a killed run resumes where it stood.
public struct PipelineImport: Sendable {
    public let library: Library
    public let configuration: PipelineConfiguration
    /// The run's source: the new items are planned under it.
    public let sourceID: Int64
    /// Written into new asset rows.
    public var runID: String?
    /// The media engine: by default, the one the run's memory budget allows (`MediaConfiguration.within`).
    public var media: MediaEngine
    public var clipOptions = ClipOptions()
    /// Times lane timeouts, backoff and the cancellation deadline.
    public var clock: any Clock<Duration> = DispatchTimerClock()
    /// Told the bytes of each original copied into the library.
    public var onCopied: @Sendable (Int64) -> Void = { _ in }
    public var onDamaged: @Sendable (String, String) -> Void = { _, _ in }
    public var onKeptWithoutPreview: @Sendable (String, FailureReason) -> Void = { _, _ in }
    /// The run's blocking-work counter, handed to the stages.
    package var work: WorkTracker?
    /// Where new content goes: the library's own store unless a run says otherwise.
    package var destination: any ImportDestination = LibraryDestination()
    /// Where the items' states and their stages' rows are kept: the library's SQLite catalog, or a PostgreSQL
    /// catalog several hosts share.
    package let itemCatalog: any ItemCatalog

    public init(library: Library, catalog: any ItemCatalog, configuration: PipelineConfiguration, sourceID: Int64) {
        self.library = library
        itemCatalog = catalog
        self.configuration = configuration
        self.sourceID = sourceID
        media = MediaEngine(configuration: configuration.memory.map { .within($0) } ?? MediaConfiguration())
    }

    /// Runs every page `pages` plans, as one run: one scheduler, one record writer and one group commit, the next
    /// page's transfers starting while the clips of the one before are still being made. Each page is shown to
    /// the destination before the lanes get it.
    package func run(pages: any PlannedPageSource, onEvent: @escaping @Sendable (PipelineEvent) -> Void,
             cancellation: PipelineCancellation) async throws -> PipelineRunResult {
        let (scheduler, destinationRun) = try await makeScheduler(onEvent: onEvent, cancellation: cancellation)
        return try await scheduler.run(pages: PreparedPages(pages: pages, destination: destination, run: destinationRun))
    }

    /// The run's configuration as the scheduler gets it: with what the destination says of its own work (whether it
    /// makes derivatives, which items its transfer holds in memory).
    package var schedulerConfiguration: PipelineConfiguration {
        var configuration = self.configuration
        configuration.destinationMakesDerivatives = destination.makesOwnDerivatives
        configuration.transfer.holdsItemsUpTo = max(configuration.transfer.holdsItemsUpTo,
                                                    destination.holdsItemsInMemoryUpTo)
        return configuration
    }

    private func makeScheduler(onEvent: @escaping @Sendable (PipelineEvent) -> Void,
                               cancellation: PipelineCancellation) async throws -> (PipelineScheduler, DestinationRun) {
        let configuration = schedulerConfiguration
        let groupCommit = try GroupCommit(libraryRoot: library.layout.root)
        var destinationRun = DestinationRun(
            library: library, groupCommit: groupCommit, runID: runID, media: media, clipOptions: clipOptions,
            clipsEnabled: configuration.clipsEnabled, onCopied: onCopied, onDamaged: onDamaged,
            onKeptWithoutPreview: onKeptWithoutPreview, work: work)
        destinationRun.route = { [configuration] in configuration.route(for: $0) }
        let scheduler = PipelineScheduler(
            configuration: configuration, stages: destination.stages(for: destinationRun),
            store: CatalogItemStateStore(catalog: itemCatalog,
                                         groupCommit: groupCommit),
            clock: clock,
            onEvent: onEvent)
        await cancellation.attach(scheduler)
        return (scheduler, destinationRun)
    }
}

/// A run's pages, each shown to the destination (which may ask what it holds of them) before the lanes get it.
private struct PreparedPages: PlannedPageSource {
    let pages: any PlannedPageSource
    let destination: any ImportDestination
    package let run: DestinationRun

    var refillBelow: Int { pages.refillBelow }

    func nextPage(ended: [FileOutcomeEntry]) async throws -> [ItemRecord]? {
        guard let records = try await pages.nextPage(ended: ended) else { return nil }
        try await destination.prepare(records, run: run)
        return records
    }
}
