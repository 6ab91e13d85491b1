import CairnCore

/// The item state machine's moves (the state itself, and how it is stored, live in Core).
extension ItemState {
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
