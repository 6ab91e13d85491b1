import Foundation
import Synchronization

/// `transform` of every element, in their order, at most `width` at once (a child task each): the async work's
/// map, where `parallelMap` is the blocking work's.
package func concurrentMap<Element: Sendable, Mapped: Sendable>(
    _ elements: [Element], width: Int, _ transform: @escaping @Sendable (Element) async -> Mapped
) async -> [Mapped] {
    await withTaskGroup(of: (Int, Mapped).self) { group in
        var mapped = [Mapped?](repeating: nil, count: elements.count)
        for index in 0..<min(max(width, 1), elements.count) {
            group.addTask { (index, await transform(elements[index])) }
        }
        var next = min(max(width, 1), elements.count)
        while let (index, value) = await group.next() {
            mapped[index] = value
            guard next < elements.count else { continue }
            let index = next
            group.addTask { (index, await transform(elements[index])) }
            next += 1
        }
        return mapped.map { $0! }
    }
}

/// Runs `body` over `0..<count` on at most `workers` threads, each with state of its own
/// (a reusable buffer, a digest context), and returns the outputs in index order.
///
/// Workers pull the next index from a shared counter, so a slow item never idles the others. The calling thread is
/// one of them and the others run on `BlockingPool`'s threads (more than the cores: workers beyond the cores keep
/// more reads of cold small files in flight, each waiting on the disk rather than the CPU). A caller that is itself
/// a pool thread cannot deadlock: it drains every index alone if no other thread is free, and waits for no helper
/// that has not started.
public func parallelMap<State, Output>(
    count: Int,
    workers: Int,
    makeState: @escaping @Sendable () -> State,
    body: @escaping @Sendable (inout State, Int) -> Output
) -> [Output] {
    guard count > 0 else { return [] }
    let slots = ResultSlots<Output>(count: count)
    let next = IndexCounter()
    let drain: @Sendable () -> Void = {
        var state = makeState()
        while case let index = next.take(), index < count {
            slots[index] = body(&state, index)
        }
    }
    // The caller waits only for helpers that started: one still queued when the indices ran out never will, so a
    // caller on a full pool never waits on a thread that no one will free.
    let helpers = Locked((started: 0, closed: false))
    let finished = BlockingPool.Semaphore(value: 0)
    for _ in 0..<(max(1, min(workers, count)) - 1) {
        BlockingPool.submit {
            let starts = helpers.withLock { helpers in
                if helpers.closed { return false }
                helpers.started += 1
                return true
            }
            guard starts else { return }
            drain()
            finished.signal()
        }
    }
    drain()
    let started = helpers.withLock { helpers in
        helpers.closed = true
        return helpers.started
    }
    for _ in 0..<started { finished.wait() }
    return slots.collect()
}

/// The next index to work on, shared by the workers.
private final class IndexCounter: Sendable {
    private let next = Atomic<Int>(0)

    func take() -> Int { next.add(1, ordering: .relaxed).oldValue }
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
