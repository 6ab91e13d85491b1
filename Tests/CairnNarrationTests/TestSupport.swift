import CairnCore
@testable import CairnNarration
import CairnTesting
import Foundation

/// A fixed start so every test's times and relative texts are reproducible.
let testEpoch = Date(timeIntervalSince1970: 1_800_000_000)
let utc = TimeZone(identifier: "UTC")!

func event(_ kind: NarrationEvent.Kind, at seconds: Double, phase: SyncPhase? = nil, message: String? = nil,
           file: String? = nil) -> NarrationEvent {
    NarrationEvent(kind: kind, time: testEpoch.addingTimeInterval(seconds), runID: "run-1",
                   phase: phase, message: message, file: file)
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
