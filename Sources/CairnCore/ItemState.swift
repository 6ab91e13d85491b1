/// Where one item stands in its import. A pure value: the scheduler asks it for every move (the transitions live
/// with the pipeline), the catalog persists it through its one codec (below), and a later run resumes from it.
///
/// An active state (`transferring` ... `synthesizing`) names the phase the item owes next, whether
/// that phase is running or the item waits in the lane's inbox: a phase's output is written
/// atomically before the item moves on, so resuming restarts exactly that phase.
public enum ItemState: Hashable, Sendable {
    /// Planned and persisted before any heavy work.
    case placeholder
    /// Handed to the pipeline; waits for the transfer lane.
    case queued
    case transferring
    case probing
    case thumbnailing
    case synthesizing
    /// Everything the item's route asks for is done (or its bytes were already in the library).
    case ready
    /// Boxed, so the common states (and every record that holds one) stay a word wide.
    indirect case failed(ItemFailure)
    /// Withdrawn from the import (by a person or a later plan); never worked on again unless re-queued.
    case cancelled

    /// The lane this state waits on, for the active states.
    public var activeLane: Lane? {
        switch self {
        case .transferring: return .transfer
        case .probing: return .metadata
        case .thumbnailing: return .thumbnail
        case .synthesizing: return .synthesis
        default: return nil
        }
    }

    /// Where an item persisted in this state restarts: the phase it was in, or nil when it is finished
    /// (ready, cancelled, or failed for good). A retryable failure restarts its failed phase.
    public var resumeLane: Lane? {
        switch self {
        case .placeholder, .queued, .transferring: return .transfer
        case .probing: return .metadata
        case .thumbnailing: return .thumbnail
        case .synthesizing: return .synthesis
        case .failed(let failure): return failure.retryable ? failure.phase : nil
        case .ready, .cancelled: return nil
        }
    }

    /// The failure, for `failed`.
    public var failure: ItemFailure? {
        if case .failed(let failure) = self { return failure }
        return nil
    }

    /// True for states no run will move on from by itself.
    public var isTerminal: Bool { resumeLane == nil }

    /// Whether the item's original is not in the library yet: before or in the transfer, or failed in it.
    public var owesTransfer: Bool {
        switch self {
        case .placeholder, .queued, .transferring: return true
        case .failed(let failure): return failure.phase == .transfer
        default: return false
        }
    }

    public var name: Name {
        switch self {
        case .placeholder: return .placeholder
        case .queued: return .queued
        case .transferring: return .transferring
        case .probing: return .probing
        case .thumbnailing: return .thumbnailing
        case .synthesizing: return .synthesizing
        case .ready: return .ready
        case .failed: return .failed
        case .cancelled: return .cancelled
        }
    }

    /// The state's name without its payload: its column value and a key for counts.
    public enum Name: String, CaseIterable, Codable, Sendable, Comparable {
        case placeholder, queued, transferring, probing, thumbnailing, synthesizing, ready, failed, cancelled

        public static func < (lhs: Name, rhs: Name) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }
}

/// Why and where an item failed. `attempts` counts the tries of `phase` in the run that failed it.
public struct ItemFailure: Hashable, Codable, Sendable {
    public var phase: Lane
    /// What failed and why, e.g. "decode: invalid data found when processing input".
    public var reason: FailureReason
    public var attempts: Int
    /// False for corrupt or unsupported media and for crash-looping files: no run retries them.
    public var retryable: Bool

    public init(phase: Lane, reason: FailureReason, attempts: Int, retryable: Bool) {
        self.phase = phase
        self.reason = reason
        self.attempts = attempts
        self.retryable = retryable
    }
}

/// One stage of an item's import, and the lane of workers that runs it. An item passes through the lanes in
/// declaration order (the route, with its rules, is the pipeline's).
public enum Lane: String, CaseIterable, Codable, Sendable, Comparable {
    /// Copy into the library with hash-while-copy verification.
    case transfer
    /// Probe the media; results go into the catalog.
    case metadata
    /// Thumbnail and preview from one decode.
    case thumbnail
    /// A short clip from a still; the lowest-priority lane.
    case synthesis

    /// The state an item is in while this lane owes it work.
    public var activeState: ItemState {
        switch self {
        case .transfer: return .transferring
        case .metadata: return .probing
        case .thumbnail: return .thumbnailing
        case .synthesis: return .synthesizing
        }
    }

    public var index: Int {
        switch self {
        case .transfer: return 0
        case .metadata: return 1
        case .thumbnail: return 2
        case .synthesis: return 3
        }
    }

    public static func < (lhs: Lane, rhs: Lane) -> Bool { lhs.index < rhs.index }
}

// MARK: The codec

/// An item state is stored flat, in the columns `state`, `phase`, `operation`, `reason`, `category`, `attempts`
/// and `retryable` (all but `state` set for `failed` only; `operation` when the failure names one; a failure
/// stored before categories were kept has none, and reads as `other`). This is the one
/// place that maps the two ways; a record that holds a state decodes it from the same decoder as its own columns.
extension ItemState: Codable {
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case state, phase, operation, reason, category, attempts, retryable
    }

    public init(from decoder: any Decoder) throws {
        let columns = try decoder.container(keyedBy: CodingKeys.self)
        let name = try columns.decode(Name.self, forKey: .state)
        switch name {
        case .placeholder: self = .placeholder
        case .queued: self = .queued
        case .transferring: self = .transferring
        case .probing: self = .probing
        case .thumbnailing: self = .thumbnailing
        case .synthesizing: self = .synthesizing
        case .ready: self = .ready
        case .cancelled: self = .cancelled
        case .failed:
            // A failure without its phase (a hand edit of the catalog) names no valid state.
            let phase = try columns.decode(Lane.self, forKey: .phase)
            self = .failed(ItemFailure(
                phase: phase,
                reason: FailureReason(operation: try columns.decodeIfPresent(String.self, forKey: .operation),
                                      try columns.decodeIfPresent(String.self, forKey: .reason) ?? "",
                                      category: FailureCategory(stored: try columns.decodeIfPresent(String.self, forKey: .category))),
                attempts: try columns.decodeIfPresent(Int.self, forKey: .attempts) ?? 0,
                retryable: try columns.decodeIfPresent(Bool.self, forKey: .retryable) ?? false))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        let stored = storedColumns
        var columns = encoder.container(keyedBy: CodingKeys.self)
        try columns.encode(stored.state, forKey: .state)
        try columns.encode(stored.phase, forKey: .phase)
        try columns.encode(stored.operation, forKey: .operation)
        try columns.encode(stored.reason, forKey: .reason)
        try columns.encode(stored.category, forKey: .category)
        try columns.encode(stored.attempts, forKey: .attempts)
        try columns.encode(stored.retryable, forKey: .retryable)
    }

    /// The values of `CodingKeys`' columns, in their order: what `encode(to:)` writes, for a save that binds them
    /// straight into a statement (an import saves a record per phase, and going through an encoder cost more than
    /// the SQL).
    public var storedColumns: (state: String, phase: String?, operation: String?, reason: String?, category: String?,
                               attempts: Int, retryable: Bool) {
        let failure = self.failure
        return (name.rawValue, failure?.phase.rawValue, failure?.reason.operation, failure?.reason.reason,
                failure?.reason.category.rawValue, failure?.attempts ?? 0, failure?.retryable ?? false)
    }
}
