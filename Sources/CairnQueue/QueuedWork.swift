import CairnCore
import Foundation
import PostgresNIO

/// A derivative a library lacks for one content: the job's key is (library, checksum, kind), so the same work is
/// queued at most once while it is unfinished, whoever asks for it.
public struct QueuedWork: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        case probe, thumbnail, preview, clip
    }

    /// The library's identity (its folder as every worker mounts it, or its id).
    public var library: String
    /// The content's SHA1, hex.
    public var checksum: String
    public var kind: Kind
    /// What the worker needs beyond the key (the original's path in the library), opaque to the queue.
    public var payload: String
    /// Whether a job that already did this work (the key's newest job, done, with the same payload) stands for it:
    /// its result is taken as it is, nothing is queued. An import resumed after its jobs finished asks for this.
    public var reusesDoneJob: Bool

    public init(library: String, checksum: String, kind: Kind, payload: String = "", reusesDoneJob: Bool = false) {
        self.library = library
        self.checksum = checksum
        self.kind = kind
        self.payload = payload
        self.reusesDoneJob = reusesDoneJob
    }
}

/// One claim of one job: every change a worker makes to the job carries `token`, and a change whose token is no
/// longer the job's (the lease expired and another worker took it, or it was released) changes nothing.
public struct Lease: Sendable, Hashable {
    public var job: Int64
    public var token: UUID
    public var work: QueuedWork
    /// Which attempt this is, from 1.
    public var attempt: Int
}

/// How a job ended, as whoever waits for it reads it.
public enum JobOutcome: Sendable, Equatable {
    /// Done, with what the job returned.
    case done(result: String)
    /// Failed for good, with the last reason and its category: `damaged` when no attempt can mend it (the job said
    /// its input is damaged); otherwise its tries ran out (workers killed under it, I/O errors), and a later job may
    /// do better.
    case failed(reason: String, category: FailureCategory, damaged: Bool)
}

/// A job's failure as the job throws it: whether another attempt may do better (an I/O error) or not (damaged
/// media fails the job at once). Any other error a job throws counts as retryable.
public struct JobFailure: Error, CustomStringConvertible {
    public var reason: String
    public var isRetryable: Bool
    /// Carried to whoever waits for the job, beside the reason.
    public var category: FailureCategory

    public init(reason: String, isRetryable: Bool, category: FailureCategory = .other) {
        self.reason = reason
        self.isRetryable = isRetryable
        self.category = category
    }

    public var description: String { reason }
}

/// Why a queue operation could not be done.
public struct WorkQueueError: Error, CustomStringConvertible {
    public var operation: String
    public var reason: String
    public var description: String { "the work queue could not \(operation): \(reason)" }
}

extension WorkQueueError {
    /// An error from the queue in one line that helps (postgres-nio's own description says nothing, on purpose)
    /// and never shows the connection's password.
    public static func describe(_ error: any Error) -> String {
        if let transaction = error as? PostgresTransactionError,
           let cause = transaction.closureError ?? transaction.beginError ?? transaction.commitError {
            return describe(cause)
        }
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] { return "the server said: \(message)" }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }
}
