import CairnCore
import Dispatch
import Glibc
import Synchronization
import Testing

@Suite struct ParallelMapTests {
    @Test func outputsComeBackInIndexOrderAndEachIndexRunsOnce() {
        let runs = Atomic<Int>(0)
        let outputs = parallelMap(count: 1000, workers: 3, makeState: { () }, body: { _, index in
            runs.add(1, ordering: .relaxed)
            return index * index
        })
        #expect(outputs == (0..<1000).map { $0 * $0 })
        #expect(runs.load(ordering: .relaxed) == 1000)
    }

    @Test(arguments: [1, 6])
    func asManyWorkersRunAtOnceAsAskedEvenBeyondTheCores(workers: Int) {
        // Each call waits until every worker has arrived: fewer workers at once than asked (Dispatch's
        // concurrentPerform runs no more than the cores) leave the barrier short, and the calls give up.
        let arrived = Atomic<Int>(0)
        let outputs = parallelMap(count: workers, workers: workers, makeState: { () }, body: { _, _ in
            arrived.add(1, ordering: .sequentiallyConsistent)
            let deadline = DispatchTime.now() + .seconds(20)
            while arrived.load(ordering: .sequentiallyConsistent) < workers {
                if DispatchTime.now() > deadline { return false }
                usleep(1000)
            }
            return true
        })
        #expect(outputs == Array(repeating: true, count: workers))
    }
}
