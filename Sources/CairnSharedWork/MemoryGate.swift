import CairnCore

/// A queue worker's memory budget: a job's decode or encode starts once the budget has room for its estimate, by
/// the rule the import's scheduler follows (`MemoryBudget.admission`), in the order the jobs asked: one estimated
/// above the budget waits until nothing else holds memory and then runs alone, never starved.
final class MemoryGate: Sendable {
    let budget: MemoryBudget
    /// The state is what the jobs running hold; a request, a job's estimate.
    private let queue: AdmissionQueue<Int64, Int64, Void>

    init(budget: MemoryBudget) {
        self.budget = budget
        queue = AdmissionQueue(0, order: .strict) { inUse, bytes in
            guard budget.admission(of: bytes, besides: inUse) != .waits else { return nil }
            inUse += bytes
            return ()
        }
    }

    /// What the jobs running now were admitted with.
    var inUse: Int64 { queue.state }

    /// Runs `work` holding `bytes` of the budget. Throws `MemoryRefusal` when `bytes` is above what the kernel
    /// allows (the work would be killed), `CancellationError` when the task is cancelled while it waits.
    func run<Value: Sendable>(holding bytes: Int64, _ work: () async throws -> Value) async throws -> Value {
        if case .aboveLimit(let needed, let limit) = budget.admission(of: bytes, besides: 0) {
            throw MemoryRefusal(needed: needed, limit: limit)
        }
        let held = max(0, bytes)
        try await queue.acquire(held)
        defer { queue.update { $0 -= held } }
        return try await work()
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
