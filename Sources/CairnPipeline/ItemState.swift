/// Where one item stands in its import. A pure value: the scheduler asks it for every move,
/// the store persists it, and a later run resumes from it.
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

    /// True for states no run will move on from by itself.
    public var isTerminal: Bool { resumeLane == nil }

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

    /// The state's name without its payload: a column value and a key for counts.
    public enum Name: String, CaseIterable, Codable, Sendable, Comparable {
        case placeholder, queued, transferring, probing, thumbnailing, synthesizing, ready, failed, cancelled

        public static func < (lhs: Name, rhs: Name) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    // MARK: Transitions

    /// Whether the machine allows moving from `self` to `next` for an item on `route`.
    ///
    /// Legal moves: placeholder -> queued; queued -> transferring; each active state -> the next
    /// lane's state on the route, or -> ready after its last lane; transferring -> ready (bytes
    /// already in the library); an active state -> failed in that same phase; a retryable failure
    /// -> its phase's state again; anything not ready -> cancelled; cancelled -> queued.
    public func canMove(to next: ItemState, on route: ItemRoute) -> Bool {
        switch (self, next) {
        case (.placeholder, .queued), (.queued, .transferring), (.cancelled, .queued):
            return true
        case (.ready, _), (.cancelled, _):
            return false
        case (_, .cancelled):
            return true
        case (.failed(let failure), .ready) where failure.phase == .synthesis && !route.includesSynthesis:
            // A clip that failed retryably, and clips switched off since: the item is complete without it.
            return failure.retryable
        case (.failed(let failure), _):
            return failure.retryable && next == failure.phase.activeState
                && (failure.phase != .synthesis || route.includesSynthesis)
        case (.transferring, .ready):
            return true
        default:
            break
        }
        guard let lane = activeLane else { return false }
        if lane == .synthesis && !route.includesSynthesis {
            // Clips were switched off since the item reached synthesis: it may only finish or fail.
            if case .failed(let failure) = next { return failure.phase == .synthesis && failure.attempts >= 1 }
            return next == .ready
        }
        switch next {
        case .failed(let failure):
            return failure.phase == lane && failure.attempts >= 1
        case .ready:
            return lane.next(on: route) == nil
        default:
            guard let following = lane.next(on: route) else { return false }
            return next == following.activeState
        }
    }

    /// The state after moving to `next`; throws when the machine forbids the move.
    public func moving(to next: ItemState, on route: ItemRoute) throws(IllegalItemTransition) -> ItemState {
        guard canMove(to: next, on: route) else { throw IllegalItemTransition(from: self, to: next, route: route) }
        return next
    }
}

/// Why and where an item failed. `attempts` counts the tries of `phase` in the run that failed it.
public struct ItemFailure: Hashable, Codable, Sendable {
    public var phase: Lane
    /// One line naming the reason, e.g. "invalid data found when processing input".
    public var reason: String
    public var attempts: Int
    /// False for corrupt or unsupported media and for crash-looping files: no run retries them.
    public var retryable: Bool

    public init(phase: Lane, reason: String, attempts: Int, retryable: Bool) {
        self.phase = phase
        self.reason = reason
        self.attempts = attempts
        self.retryable = retryable
    }
}

/// A move the item state machine forbids; the scheduler never asks for one, so seeing it is a bug.
public struct IllegalItemTransition: Error, Hashable, CustomStringConvertible {
    public var from: ItemState
    public var to: ItemState
    public var route: ItemRoute

    public var description: String {
        "illegal item state transition \(from.name.rawValue) -> \(to.name.rawValue)"
            + (route.includesSynthesis ? "" : " (route without synthesis)")
    }
}
