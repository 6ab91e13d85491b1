@testable import CairnQueue
import CairnCore
import Testing

/// The "ended" NOTIFY goes out in a statement of its own, once for all the jobs that ended within its interval.
@Suite struct EndedNoticeTests {
    @Test func jobsThatEndWithinTheIntervalShareOneNoticeAndTheOneStillOwedGoesOutAtTheClose() async {
        let notice = EndedNotice(interval: .seconds(3600))
        let sent = Locked(0)
        let (firstSent, tellFirstSent) = AsyncStream<Void>.makeStream()
        let running = Task {
            await notice.run {
                sent.withLock { $0 += 1 }
                tellFirstSent.yield()
            }
        }
        notice.jobsEnded()
        for await _ in firstSent { break }
        // The interval (an hour) has begun: these wait for it, or for the close.
        for _ in 0..<100 { notice.jobsEnded() }
        #expect(sent.withLock { $0 } == 1)
        let flushed = Locked(0)
        await notice.flush { flushed.withLock { $0 += 1 } }
        await notice.flush { flushed.withLock { $0 += 1 } }
        running.cancel()
        await running.value
        #expect(sent.withLock { $0 } == 1)
        #expect(flushed.withLock { $0 } == 1)
    }

    @Test func nothingEndedSendsNothing() async {
        let notice = EndedNotice(interval: .milliseconds(1))
        let flushed = Locked(0)
        await notice.flush { flushed.withLock { $0 += 1 } }
        #expect(flushed.withLock { $0 } == 0)
    }
}
