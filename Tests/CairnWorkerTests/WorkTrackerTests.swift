import Testing

@testable import CairnStages

/// A run waits for its abandoned blocking work before it lets go of the library: woken by the last piece's end,
/// given up at its limit, and never left waiting when nothing runs.
@Suite struct WorkTrackerTests {
    @Test func theWaitEndsWhenTheLastWorkEnds() async {
        let tracker = WorkTracker()
        tracker.started()
        tracker.started()
        let waiting = Task { await tracker.waitUntilIdle(limit: .seconds(600)) }
        tracker.ended()
        #expect(tracker.running == 1)
        tracker.ended()
        #expect(await waiting.value)
        #expect(tracker.running == 0)
    }

    @Test func theWaitGivesUpAtItsLimitAndIsIdleAtOnceWhenNothingRuns() async {
        let tracker = WorkTracker()
        #expect(await tracker.waitUntilIdle(limit: .seconds(600)))
        tracker.started()
        #expect(await tracker.waitUntilIdle(limit: .milliseconds(50)) == false)
        tracker.ended()
        #expect(await tracker.waitUntilIdle(limit: .seconds(600)))
    }
}
