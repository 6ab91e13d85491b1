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

/// A fixed-size buffer that threads fill at distinct indices, read once every thread has finished.
/// The memory is allocated once and never moves: each thread writes its own element through the same base
/// pointer, with no exclusive access to a shared Swift array (which concurrent writers would race on).
private final class ResultSlots<Element>: @unchecked Sendable {
    private let storage: UnsafeMutableBufferPointer<Element?>

    init(count: Int) {
        storage = .allocate(capacity: count)
        storage.initialize(repeating: nil)
    }

    deinit {
        storage.baseAddress?.deinitialize(count: storage.count)
        storage.deallocate()
    }

    subscript(index: Int) -> Element? {
        get { storage[index] }
        set { storage[index] = newValue }
    }

    func collect() -> [Element] { storage.map { $0! } }
}
