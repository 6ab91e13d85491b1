import XCTest
@testable import CairnWatch

final class WatchSchedulerTests: XCTestCase {
    private let settings = WatchScheduler.Settings(quiet: 2, maxDelay: 30, fullSyncInterval: 3600)

    /// Feeds `inputs` (with the time of each) and returns every decision with the time it was made.
    private func drive(_ scheduler: inout WatchScheduler, _ inputs: [(Double, WatchScheduler.Input)]) -> [(Double, WatchScheduler.Decision)] {
        var decisions: [(Double, WatchScheduler.Decision)] = []
        for (time, input) in inputs {
            decisions += scheduler.handle(input, now: time).map { (time, $0) }
        }
        return decisions
    }

    func testTheFirstTickStartsARunAtStartUp() {
        var scheduler = WatchScheduler(settings: settings, now: 0)
        XCTAssertEqual(scheduler.handle(.tick, now: 0), [.startRun(.startup)])
        XCTAssertEqual(scheduler.handle(.tick, now: 1), [], "one run at a time")
    }

    func testChangesStartARunOnceTheTreeIsQuiet() {
        var scheduler = WatchScheduler(settings: settings, now: 0)
        _ = drive(&scheduler, [(0, .tick), (1, .runEnded)])
        XCTAssertEqual(drive(&scheduler, [(10, .changed), (11, .tick), (11.5, .changed), (13, .tick)]).map(\.1), [])
        XCTAssertEqual(scheduler.handle(.tick, now: 13.6).first, .startRun(.changes))
    }

    func testAChangingTreeIsSyncedAfterTheMaximumDelay() {
        var scheduler = WatchScheduler(settings: settings, now: 0)
        _ = drive(&scheduler, [(0, .tick), (1, .runEnded)])
        var started: [Double] = []
        var time = 10.0
        while time < 50 {
            for (at, decision) in drive(&scheduler, [(time, .changed), (time, .tick)]) where decision == .startRun(.changes) {
                started.append(at)
            }
            time += 0.5
        }
        XCTAssertEqual(started.first, 40, "30 s after the first change of the burst")
    }

    func testAThousandChangesOverTenSecondsMakeOneRunAndChangesDuringARunOneMore() {
        var scheduler = WatchScheduler(settings: settings, now: 0)
        _ = drive(&scheduler, [(0, .tick), (1, .runEnded)])
        var runs = 0
        var inputs: [(Double, WatchScheduler.Input)] = []
        for index in 0..<1000 { inputs.append((10 + Double(index) * 0.01, .changed)) }
        for tick in stride(from: 10.0, through: 30, by: 0.25) { inputs.append((tick, .tick)) }
        inputs.sort { $0.0 < $1.0 }
        for (_, decision) in drive(&scheduler, inputs) { if case .startRun = decision { runs += 1 } }
        XCTAssertEqual(runs, 1)
        XCTAssertTrue(scheduler.isRunning)
        // Many changes while that run works: exactly one more run, after it ends and the tree is quiet.
        var more = 0
        var during: [(Double, WatchScheduler.Input)] = (0..<500).map { (31 + Double($0) * 0.01, .changed) }
        during += [(40, .tick), (41, .runEnded), (41, .tick), (44, .tick), (45, .tick)]
        for (_, decision) in drive(&scheduler, during) { if case .startRun = decision { more += 1 } }
        XCTAssertEqual(more, 1)
        _ = scheduler.handle(.runEnded, now: 50)
        XCTAssertEqual(scheduler.handle(.tick, now: 60), [], "nothing changed since")
    }

    func testAFullSyncRunsAfterTheIntervalWithoutChanges() {
        var scheduler = WatchScheduler(settings: settings, now: 0)
        _ = drive(&scheduler, [(0, .tick), (5, .runEnded)])
        XCTAssertEqual(scheduler.handle(.tick, now: 3604), [])
        XCTAssertEqual(scheduler.handle(.tick, now: 3605), [.startRun(.periodic)])
    }

    func testAnOverflowedQueueAsksForAFullSync() {
        var scheduler = WatchScheduler(settings: settings, now: 0)
        _ = drive(&scheduler, [(0, .tick), (1, .runEnded), (5, .changed), (5.5, .overflowed)])
        XCTAssertEqual(scheduler.handle(.tick, now: 8), [.startRun(.overflow)])
    }

    func testStopWaitsForTheRunInFlightAndStartsNothingNew() {
        var scheduler = WatchScheduler(settings: settings, now: 0)
        _ = scheduler.handle(.tick, now: 0)
        XCTAssertEqual(scheduler.handle(.stop, now: 1), [.cancelRun])
        XCTAssertEqual(scheduler.handle(.changed, now: 1.5), [])
        XCTAssertEqual(scheduler.handle(.tick, now: 9), [])
        XCTAssertEqual(scheduler.handle(.runEnded, now: 10), [.exit])

        var idle = WatchScheduler(settings: settings, now: 0)
        _ = drive(&idle, [(0, .tick), (1, .runEnded)])
        XCTAssertEqual(idle.handle(.stop, now: 2), [.exit])
    }
}
