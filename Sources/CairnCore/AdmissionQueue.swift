/// Tasks waiting for a share of something counted (a lane's runners, a worker's memory budget), admitted by one
/// rule under one lock: the one waiting mechanism for both, so cancellation and hand-off are written once.
///
/// `admit` takes what a request needs from the state and says what it was granted, or nil when it must wait. A
/// request that finds room starts at once (with `.strict`, only when nobody waits before it). Each `update` gives
/// something back and admits the waiters that now fit, in the order they came: with `.strict` the first that does
/// not fit holds the others back (a large request is never starved by small ones after it); with `.firstThatFits`
/// it is passed over. A task cancelled while it waits holds nothing and throws `CancellationError`.
public final class AdmissionQueue<State: Sendable, Request: Sendable, Grant: Sendable>: Sendable {
    public enum Order: Sendable {
        case strict
        case firstThatFits
    }

    private struct Waiter {
        var ticket: UInt64
        var request: Request
        var continuation: CheckedContinuation<Grant, any Error>
    }

    private struct Inner {
        var state: State
        var waiting: [Waiter] = []
        var nextTicket: UInt64 = 0
    }

    private enum Decision {
        case granted(Grant)
        case cancelled
        case waits
    }

    private let inner: Locked<Inner>
    private let order: Order
    private let admit: @Sendable (inout State, Request) -> Grant?

    public init(_ state: State, order: Order, admit: @escaping @Sendable (inout State, Request) -> Grant?) {
        inner = Locked(Inner(state: state))
        self.order = order
        self.admit = admit
    }

    /// The state as it stands.
    public var state: State { inner.withLock { $0.state } }

    /// Waits until `request` is admitted; returns its grant.
    public func acquire(_ request: Request) async throws -> Grant {
        let ticket = inner.withLock { inner -> UInt64 in
            inner.nextTicket += 1
            return inner.nextTicket
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                // Cancellation is checked under the lock: a handler that ran before this found nothing to take out
                // (the flag is set before it runs), so the request must not be queued at all.
                let decision = inner.withLock { inner -> Decision in
                    if Task.isCancelled { return .cancelled }
                    if order == .firstThatFits || inner.waiting.isEmpty, let grant = admit(&inner.state, request) {
                        return .granted(grant)
                    }
                    inner.waiting.append(Waiter(ticket: ticket, request: request, continuation: continuation))
                    return .waits
                }
                switch decision {
                case .granted(let grant): continuation.resume(returning: grant)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waits: break
                }
            }
        } onCancel: {
            let (removed, admitted) = inner.withLock { inner -> (CheckedContinuation<Grant, any Error>?, [(Waiter, Grant)]) in
                guard let index = inner.waiting.firstIndex(where: { $0.ticket == ticket }) else { return (nil, []) }
                let removed = inner.waiting.remove(at: index).continuation
                // The waiter that left may have held the others back.
                return (removed, admitWaiters(&inner))
            }
            removed?.resume(throwing: CancellationError())
            for (waiter, grant) in admitted { waiter.continuation.resume(returning: grant) }
        }
    }

    /// Changes the state (gives something back), then admits the waiters that now fit.
    public func update(_ change: (inout State) -> Void) {
        let admitted = inner.withLock { inner -> [(Waiter, Grant)] in
            change(&inner.state)
            return admitWaiters(&inner)
        }
        for (waiter, grant) in admitted { waiter.continuation.resume(returning: grant) }
    }

    /// The waiters that now fit, in order, taken out of the queue with what they were granted.
    private func admitWaiters(_ inner: inout Inner) -> [(Waiter, Grant)] {
        var admitted: [(Waiter, Grant)] = []
        var index = 0
        while index < inner.waiting.count {
            if let grant = admit(&inner.state, inner.waiting[index].request) {
                admitted.append((inner.waiting.remove(at: index), grant))
            } else if order == .strict {
                break
            } else {
                index += 1
            }
        }
        return admitted
    }
}
