import CairnCore
import Testing

@Suite struct TimeLimitTests {
    @Test func workThatEndsInTimeGivesItsValueOrItsError() async throws {
        #expect(try await withTimeLimit(.seconds(3600), "adding") { 2 + 2 } == 4)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await withTimeLimit(.seconds(3600), "refusing") { () async throws -> Int in throw Refused() }
        }
    }

    /// The case the limit is for: work that ignores its cancel (here, a continuation only the test resumes) is
    /// given up at the limit instead of awaited.
    @Test func workThatIgnoresItsCancelIsGivenUpAtTheLimit() async throws {
        let stuck = Locked<CheckedContinuation<Void, Never>?>(nil)
        await #expect(throws: TimeLimitExceeded(operation: "a stuck call", limit: .milliseconds(50))) {
            try await withTimeLimit(.milliseconds(50), "a stuck call") {
                await withCheckedContinuation { continuation in stuck.withLock { $0 = continuation } }
                return 1
            }
        }
        #expect("\(TimeLimitExceeded(operation: "a stuck call", limit: .milliseconds(50)))" == "a stuck call took longer than 0.05 s")
        // Let the abandoned work end, so nothing outlives the test. It may not have started waiting yet.
        while true {
            if let continuation = stuck.withLock({ $0 }) { continuation.resume(); break }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func theCallersCancelReachesTheWork() async throws {
        let caller = Task {
            try await withTimeLimit(.seconds(3600), "sleeping") { try await DispatchTimerClock().sleep(for: .seconds(3600)) }
        }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
    }
}
