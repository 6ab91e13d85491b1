import CairnCore

/// The work of each phase, injected: the worker plugs in hash-while-copy, probe, thumbnail and
/// synthesis; tests plug in fakes. Each method writes its output atomically (tmp + fsync + rename
/// or one transaction) before returning, so a phase restarted after a crash or timeout is safe.
///
/// Throw an error conforming to `RetryClassifiedError` to say whether a retry may help; any other
/// error counts as retryable (an I/O hiccup). A timeout is retryable. Work that outlives its timeout
/// or the cancellation deadline is abandoned: its task is cancelled and its late result ignored.
public protocol PipelineStages: Sendable {
    /// Copies the source file into the library, verifying its SHA1 while copying.
    func transfer(_ item: ImportItem) async throws -> TransferResult
    /// Probes the media and records what it found.
    func readMetadata(_ item: ImportItem) async throws
    /// Renders the thumbnail and preview.
    func makeThumbnail(_ item: ImportItem) async throws
    /// Makes the short clip of a still.
    func synthesizeClip(_ item: ImportItem) async throws
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
public struct StageFailure: RetryClassifiedError, Hashable, CustomStringConvertible {
    public var reason: FailureReason
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

/// How one phase try ended.
enum PhaseOutcome: Sendable {
    case succeeded(TransferResult)
    case failed(reason: FailureReason, retryable: Bool)
    case timedOut(Duration)
    /// The start record could not be committed; the run is stopping.
    case notStarted

    static func perform(_ lane: Lane, of item: ImportItem, with stages: any PipelineStages) async -> PhaseOutcome {
        do {
            switch lane {
            case .transfer: return .succeeded(try await stages.transfer(item))
            case .metadata: try await stages.readMetadata(item)
            case .thumbnail: try await stages.makeThumbnail(item)
            case .synthesis: try await stages.synthesizeClip(item)
            }
            return .succeeded(.copied)
        } catch {
            let retryable = (error as? any RetryClassifiedError)?.isRetryable ?? true
            return .failed(reason: (error as? StageFailure)?.reason ?? FailureReason("\(error)"), retryable: retryable)
        }
    }
}
