@testable import CairnPipeline
import Testing

@Suite("Phase deadlines: one watcher for every running phase's timeout", .timeLimit(.minutes(1)))
struct PhaseDeadlinesTests {
    /// A watcher on a manual clock, and the timeouts it reported, in order.
    struct Watch {
        let signal = TestSignal()
        let clock: ManualClock
        let fired = Locked<[(UInt64, Duration)]>([])
        let deadlines: any PhaseDeadlines

        init() {
            clock = ManualClock(signal: signal)
            let fired = self.fired, signal = self.signal
            deadlines = makePhaseDeadlines(clock: clock) { token, timeout in
                fired.withValue { $0.append((token, timeout)) }
                signal.changed()
            }
            Task { [deadlines] in await deadlines.watch() }
        }

        var firedTokens: [UInt64] { fired.current.map(\.0) }
    }

    @Test("a deadline earlier than the one the watcher sleeps for wakes it: each phase times out on time, once")
    func earlierDeadlineRearms() async {
        let watch = Watch()
        watch.deadlines.arm(1, timeout: .seconds(50))
        await watch.clock.waitForSleeper(.seconds(50))
        watch.deadlines.arm(2, timeout: .seconds(10))
        // The sleep for 50 s is given up for one of 10 s.
        await watch.clock.waitForSleeper(.seconds(10))
        watch.clock.advance(by: .seconds(10))
        await watch.signal.wait { watch.fired.current.count == 1 }
        #expect(watch.fired.current.map(\.0) == [2])
        #expect(watch.fired.current.map(\.1) == [.seconds(10)])
        // Then back to token 1's deadline, 40 s on.
        await watch.clock.waitForSleeper(.seconds(40))
        watch.clock.advance(by: .seconds(40))
        await watch.signal.wait { watch.fired.current.count == 2 }
        #expect(watch.firedTokens == [2, 1])
        watch.deadlines.stop()
    }

    @Test("a disarmed phase never times out; a stopped watcher fires nothing and sleeps no more")
    func disarmAndStop() async {
        let watch = Watch()
        watch.deadlines.arm(1, timeout: .seconds(30))
        watch.deadlines.arm(2, timeout: .seconds(60))
        await watch.clock.waitForSleeper(.seconds(30))
        watch.deadlines.disarm(1)
        // The watcher wakes at 30 s, finds token 1 gone, and sleeps on for token 2.
        watch.clock.advance(by: .seconds(30))
        await watch.clock.waitForSleeper(.seconds(30))
        #expect(watch.fired.current.isEmpty)
        watch.deadlines.stop()
        await watch.clock.waitUntilNobodySleeps()
        watch.clock.advance(by: .seconds(60))
        watch.deadlines.arm(3, timeout: .seconds(1))
        watch.clock.advance(by: .seconds(1))
        #expect(watch.fired.current.isEmpty)
        #expect(watch.clock.pendingSleeps.isEmpty)
    }

    @Test("phases that share a deadline all time out at it")
    func sharedDeadline() async {
        let watch = Watch()
        for token in UInt64(1)...3 { watch.deadlines.arm(token, timeout: .seconds(15)) }
        await watch.clock.waitForSleeper(.seconds(15))
        watch.clock.advance(by: .seconds(15))
        await watch.signal.wait { watch.fired.current.count == 3 }
        #expect(watch.firedTokens == [1, 2, 3])
        watch.deadlines.stop()
    }
}
