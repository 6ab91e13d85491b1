import CairnCore

/// A queue worker's memory budget: a job's decode or encode starts once the budget has room for its estimate, by
/// the rule the import's scheduler follows (`MemoryBudget.admission`), in the order the jobs asked: one estimated
/// above the budget waits until nothing else holds memory and then runs alone, never starved.
final class MemoryGate: Sendable {
    private struct Waiter {
        var id: UInt64
        var bytes: Int64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var inUse: Int64 = 0
        var waiting: [Waiter] = []
        var nextID: UInt64 = 0
    }

    let budget: MemoryBudget
    private let state = Locked(State())

    init(budget: MemoryBudget) {
        self.budget = budget
    }

    /// What the jobs running now were admitted with.
    var inUse: Int64 { state.withLock { $0.inUse } }

    /// Runs `work` holding `bytes` of the budget. Throws `MemoryRefusal` when `bytes` is above what the kernel
    /// allows (the work would be killed), `CancellationError` when the task is cancelled while it waits.
    func run<Value: Sendable>(holding bytes: Int64, _ work: () async throws -> Value) async throws -> Value {
        if case .aboveLimit(let needed, let limit) = budget.admission(of: bytes, besides: 0) {
            throw MemoryRefusal(needed: needed, limit: limit)
        }
        let held = max(0, bytes)
        try await admit(held)
        defer { release(held) }
        return try await work()
    }

    private func admit(_ bytes: Int64) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case admitted, queued, cancelled }
                // A cancellation that came before this finds nothing queued: it is seen here, under the lock (the
                // flag is set before the handler runs). One that comes after takes the waiter out itself.
                let outcome = state.withLock { state -> Outcome in
                    if Task.isCancelled { return .cancelled }
                    if state.waiting.isEmpty, budget.admission(of: bytes, besides: state.inUse) != .waits {
                        state.inUse += bytes
                        return .admitted
                    }
                    state.waiting.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    return .queued
                }
                switch outcome {
                case .admitted: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .queued: break
                }
            }
        } onCancel: {
            cancel(id)?.resume(throwing: CancellationError())
        }
    }

    /// Takes waiter `id` out of the queue; nil when it is not there (admitted, or never queued).
    @discardableResult
    private func cancel(_ id: UInt64) -> CheckedContinuation<Void, any Error>? {
        let (removed, admitted) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, [Waiter]) in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return (nil, []) }
            let removed = state.waiting.remove(at: index).continuation
            // The head that left may have held the others back.
            return (removed, Self.admitWaiters(&state, budget: budget))
        }
        for waiter in admitted { waiter.continuation.resume() }
        return removed
    }

    private func release(_ bytes: Int64) {
        let admitted = state.withLock { state -> [Waiter] in
            state.inUse -= bytes
            return Self.admitWaiters(&state, budget: budget)
        }
        for waiter in admitted { waiter.continuation.resume() }
    }

    /// The waiters at the head of the queue that now fit, in order, their memory taken.
    private static func admitWaiters(_ state: inout State, budget: MemoryBudget) -> [Waiter] {
        var admitted: [Waiter] = []
        while let head = state.waiting.first, budget.admission(of: head.bytes, besides: state.inUse) != .waits {
            state.inUse += head.bytes
            admitted.append(state.waiting.removeFirst())
        }
        return admitted
    }
}

/// Work estimated above what the kernel lets this process hold.
struct MemoryRefusal: Error, CustomStringConvertible {
    var needed: Int64
    var limit: Int64

    var description: String {
        "needs about \(MemoryBudget.formatted(needed)) of memory, more than the \(MemoryBudget.formatted(limit)) "
            + "the memory limit leaves this worker (raise the cgroup's limit)"
    }
}
