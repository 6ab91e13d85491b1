import CairnCore
@testable import CairnPipeline
import Testing

/// Every state a catalog can hold, resumed under every option that changes an item's route: no record may
/// trap the scheduler, and each ends finished for this run (hardening issue, fault 2).
@Suite("Persisted states resume", .timeLimit(.minutes(1)))
struct PersistedStateTests {
    static var persistedStates: [ItemState] {
        var states: [ItemState] = [.placeholder, .queued, .transferring, .probing, .thumbnailing, .synthesizing,
                                   .ready, .cancelled]
        for lane in Lane.allCases {
            for retryable in [false, true] {
                states.append(.failed(ItemFailure(phase: lane, reason: "earlier run", attempts: 3, retryable: retryable)))
            }
        }
        return states
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var state: ItemState
        var kind: MediaKind
        var clips: Bool
        var crashCount: Int
        var testDescription: String { "\(state) \(kind) clips \(clips ? "on" : "off") crashes \(crashCount)" }
    }

    static var cases: [Case] {
        persistedStates.flatMap { state in
            [MediaKind.photo, .video].flatMap { kind in
                [true, false].flatMap { clips in [0, 2].map { Case(state: state, kind: kind, clips: clips, crashCount: $0) } }
            }
        }
    }

    @Test(arguments: cases)
    func resumesWithoutTrapping(_ scenario: Case) async throws {
        var configuration = testConfiguration(maxAttempts: 2)
        configuration.clipsEnabled = scenario.clips
        let record = ItemRecord(item: item(1, scenario.kind), state: scenario.state,
                                inFlight: scenario.crashCount > 0, crashCount: scenario.crashCount)
        let harness = Harness(configuration: configuration, records: [record])
        let result = try await harness.scheduler.run([record])
        #expect(result.completion != .interrupted)
        let final = try #require(await harness.store.record(1)?.state ?? Optional(scenario.state))
        // Nothing is left mid-way: the item is finished for this run, one way or another.
        #expect(final.isTerminal, "\(scenario.testDescription) ended as \(final)")
        if case .failed(let failure) = scenario.state, failure.retryable {
            // A retryable failure is worked on again, unless its phase is no longer on the route.
            let onRoute = failure.phase != .synthesis || (scenario.kind == .photo && scenario.clips)
            if onRoute && scenario.crashCount == 0 { #expect(final == .ready, "\(scenario.testDescription)") }
        }
    }
}
