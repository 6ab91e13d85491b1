@testable import CairnCore
import Testing

@Suite struct DispatchTimerClockTests {
    @Test func aSleepEndsNoEarlierThanItsDeadline() async throws {
        let clock = DispatchTimerClock()
        let deadline = clock.now.advanced(by: .milliseconds(20))
        try await clock.sleep(until: deadline)
        #expect(clock.now >= deadline)
    }

    @Test func aCancelledSleepThrowsAndReleasesItsTimerAtOnce() async throws {
        let timer = CancellableTimer()
        let armed = AsyncStream<Void>.makeStream()
        let sleeper = Task {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                timer.start(after: .seconds(3600), continuation)
                armed.continuation.yield()
            }
        }
        for await _ in armed.stream { break }
        #expect(timer.isArmed)
        timer.cancel()
        #expect(!timer.isArmed)
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func aTaskCancelledWhileSleepingOnTheClockThrows() async throws {
        let sleeper = Task { try await DispatchTimerClock().sleep(for: .seconds(3600)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func aTimerCancelledBeforeItStartsNeverArms() async throws {
        let timer = CancellableTimer()
        timer.cancel()
        await #expect(throws: CancellationError.self) {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                timer.start(after: .seconds(3600), continuation)
            }
        }
        #expect(!timer.isArmed)
    }
}
