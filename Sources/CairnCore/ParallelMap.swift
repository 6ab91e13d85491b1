import Dispatch
import Foundation
import Synchronization

/// Runs `body` over `0..<count` on at most `workers` threads, each with state of its own
/// (a reusable buffer, a digest context), and returns the outputs in index order.
///
/// Workers pull the next index from a shared counter, so a slow item never idles the others. The calling thread is
/// one of them and the others are threads of their own: Dispatch's `concurrentPerform` runs no more iterations at
/// once than there are cores, so workers beyond the cores (to keep more reads of cold small files in flight, each
/// waiting on the disk rather than the CPU) never ran.
public func parallelMap<State, Output>(
    count: Int,
    workers: Int,
    makeState: @Sendable () -> State,
    body: @Sendable (inout State, Int) -> Output
) -> [Output] {
    guard count > 0 else { return [] }
    let slots = ResultSlots<Output>(count: count)
    let next = IndexCounter()
    // The threads are joined before this returns, so the closures never outlive the call; the threads reach them
    // only through `work`, emptied once they are joined (a thread object may hold its block for longer).
    withoutActuallyEscaping(makeState) { makeState in
        withoutActuallyEscaping(body) { body in
            let work = SharedWork {
                var state = makeState()
                while case let index = next.take(), index < count {
                    slots[index] = body(&state, index)
                }
            }
            let finished = DispatchGroup()
            for _ in 0..<(max(1, min(workers, count)) - 1) {
                finished.enter()
                Thread {
                    work.run()
                    finished.leave()
                }.start()
            }
            work.run()
            finished.wait()
            work.clear()
        }
    }
    return slots.collect()
}

/// The drain loop the workers share. Set before any thread starts and cleared after all are joined (both
/// ordered by `Thread.start` and `DispatchGroup.wait`), so no two threads ever write it at once.
private final class SharedWork: @unchecked Sendable {
    private var body: (() -> Void)?

    init(_ body: @escaping () -> Void) { self.body = body }

    func run() { body?() }
    func clear() { body = nil }
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
