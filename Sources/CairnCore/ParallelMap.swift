import Dispatch
import Synchronization

/// Runs `body` over `0..<count` on at most `workers` threads, each with state of its own
/// (a reusable buffer, a digest context), and returns the outputs in index order.
///
/// Workers pull the next index from a shared counter, so a slow item never idles the others.
public func parallelMap<State, Output>(
    count: Int,
    workers: Int,
    makeState: @Sendable () -> State,
    body: @Sendable (inout State, Int) -> Output
) -> [Output] {
    guard count > 0 else { return [] }
    let slots = ResultSlots<Output>(count: count)
    let next = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: max(1, min(workers, count))) { _ in
        var state = makeState()
        while case let index = next.add(1, ordering: .relaxed).oldValue, index < count {
            slots[index] = body(&state, index)
        }
    }
    return slots.collect()
}

/// A fixed-size array that threads fill at distinct indices, read once every thread has finished.
private final class ResultSlots<Element>: @unchecked Sendable {
    private var storage: [Element?]

    init(count: Int) { storage = Array(repeating: nil, count: count) }

    subscript(index: Int) -> Element? {
        get { storage.withUnsafeBufferPointer { $0[index] } }
        set { storage.withUnsafeMutableBufferPointer { $0[index] = newValue } }
    }

    func collect() -> [Element] { storage.map { $0! } }
}
