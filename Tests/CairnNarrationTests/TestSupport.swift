import CairnCore
@testable import CairnNarration
import CairnTesting
import Foundation

/// A fixed start so every test's times and relative texts are reproducible.
let testEpoch = Date(timeIntervalSince1970: 1_800_000_000)
let utc = UTCOffset.utc

func record(_ event: NarrationEvent, at seconds: Double) -> NarrationRecord {
    NarrationRecord(event, time: testEpoch.addingTimeInterval(seconds), runID: "run-1")
}

func runEnd(_ outcome: RunOutcome, at seconds: Double, message: String? = nil) -> NarrationRecord {
    record(.runEnd(NarrationEvent.RunEnd(outcome: outcome, message: message, counts: RunCounts(),
                                         needsAuth: outcome == .success ? nil : false)), at: seconds)
}

/// A narrator on a manual clock recording into memory.
struct NarratorHarness {
    let clock = ManualNarrationClock(start: testEpoch)
    let recorder = InMemoryNarrationHandler()
    let narrator: Narrator

    init(extra: [any NarrationHandler] = []) {
        narrator = Narrator(runID: "run-1", handler: MultiplexNarrationHandler([recorder] + extra), clock: clock.clock)
    }
}

extension String {
    var containsEscape: Bool { contains("\u{1B}") }
}

extension NarrationRecord {
    /// The progress a `progress` event carries.
    var snapshot: ProgressSnapshot? {
        if case .progress(_, let snapshot, _, _) = event { snapshot } else { nil }
    }

    /// What a `runEnd` event carries.
    var end: NarrationEvent.RunEnd? {
        if case .runEnd(let end) = event { end } else { nil }
    }
}
