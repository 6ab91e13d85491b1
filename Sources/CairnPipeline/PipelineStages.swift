import CairnCore

/// The work of each phase, injected: the worker plugs in hash-while-copy, probe, thumbnail and
/// synthesis; tests plug in fakes. Each method puts its files in place (tmp + rename) and returns what it made
/// (`PhaseResult.products`: rows, a probe, a reason); it touches no store: the scheduler hands the products to
/// its `ItemStateStore` with the item's next state, in one save. A phase restarted after a crash or timeout is safe.
///
/// Throw an error conforming to `RetryClassifiedError` to say whether a retry may help; any other
/// error counts as retryable (an I/O hiccup). A timeout is retryable. Work that outlives its timeout
/// or the cancellation deadline is abandoned: its task is cancelled and its late result ignored.
public protocol PipelineStages: Sendable {
    /// Copies the source file into the library, verifying its SHA1 while copying.
    func transfer(_ item: ImportItem) async throws -> PhaseResult
    /// Probes the media.
    func readMetadata(_ item: ImportItem) async throws -> PhaseResult
    /// Renders the thumbnail and preview.
    func makeThumbnail(_ item: ImportItem) async throws -> PhaseResult
    /// Makes the short clip of a still.
    func synthesizeClip(_ item: ImportItem) async throws -> PhaseResult
}

/// What a phase made, for the store to persist with the item's move; opaque to the scheduler, which only carries it.
public protocol StageProducts: Sendable {}

/// How a phase's work ended well.
public struct PhaseResult: Sendable {
    /// For the transfer: whether the bytes were new to the library.
    public var transfer: TransferResult
    /// What the store saves with the item's next state (nil: nothing).
    public var products: (any StageProducts)?
    /// The probe's estimate of what the item's later phases hold (the metadata phase's word), for the memory budget.
    public var footprint: MemoryFootprint?

    public init(_ transfer: TransferResult = .copied, products: (any StageProducts)? = nil,
                footprint: MemoryFootprint? = nil) {
        self.transfer = transfer
        self.products = products
        self.footprint = footprint
    }

    /// Done, with nothing to save but the move.
    public static let done = PhaseResult()
}

/// An item's move as the store saves it: its record, and what the phase that ended made.
public struct ItemMove: Sendable {
    public var record: ItemRecord
    public var products: (any StageProducts)?

    public init(_ record: ItemRecord, products: (any StageProducts)? = nil) {
        self.record = record
        self.products = products
    }
}

public enum TransferResult: Hashable, Sendable {
    /// New bytes are now in the library: the item goes on to metadata.
    case copied
    /// The library already held these bytes: the item is ready and reported as a duplicate.
    case alreadyInLibrary
}

/// An error that knows whether trying the same phase again may succeed.
public protocol RetryClassifiedError: Error {
    var isRetryable: Bool { get }
}

/// A ready-made stage error: what failed and why, as a value, and whether a retry may help. The reason does not
/// name the item's file: every place that prints it has the item and names it once, in its own format.
public struct StageFailure: RetryClassifiedError, FailureDescribing, Hashable, CustomStringConvertible {
    public var reason: FailureReason
    public var failure: FailureReason { reason }
    public var isRetryable: Bool

    public init(reason: FailureReason, isRetryable: Bool) {
        self.reason = reason
        self.isRetryable = isRetryable
    }

    /// Corrupt or unsupported media: fails at once, never retried.
    public static func unusable(_ reason: FailureReason) -> StageFailure { StageFailure(reason: reason, isRetryable: false) }
    /// A transient problem (I/O, a busy resource): retried with backoff.
    public static func transient(_ reason: FailureReason) -> StageFailure { StageFailure(reason: reason, isRetryable: true) }

    public var description: String { reason.description }
}

/// A stage's word that its phase's work goes on elsewhere (a job queued for other workers, not waited for): the
/// item ends this run where it stands, owing the phase, as an archived item does, and the next run takes it up.
public struct PhaseLeftToOthers: Error, Hashable {
    public init() {}
}

/// How one phase try ended.
enum PhaseOutcome: Sendable {
    case succeeded(TransferResult, MemoryFootprint? = nil)
    case failed(reason: FailureReason, retryable: Bool)
    case timedOut(Duration)
    /// The start record could not be committed; the run is stopping.
    case notStarted
    /// The work goes on elsewhere (`PhaseLeftToOthers`).
    case leftToOthers

    /// The phase's work; on success also what it made, for the move the core persists next.
    static func perform(_ lane: Lane, of item: ImportItem, with stages: any PipelineStages) async
        -> (PhaseOutcome, (any StageProducts)?) {
        do {
            let result: PhaseResult
            switch lane {
            case .transfer: result = try await stages.transfer(item)
            case .metadata: result = try await stages.readMetadata(item)
            case .thumbnail: result = try await stages.makeThumbnail(item)
            case .synthesis: result = try await stages.synthesizeClip(item)
            }
            return (.succeeded(result.transfer, result.footprint), result.products)
        } catch is PhaseLeftToOthers {
            return (.leftToOthers, nil)
        } catch {
            let retryable = (error as? any RetryClassifiedError)?.isRetryable ?? true
            return (.failed(reason: FailureReason(error), retryable: retryable), nil)
        }
    }
}
