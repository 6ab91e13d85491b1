import CairnCore
import CairnReconcile
import CairnReconcileOracle
import Foundation

/// A readable checksum: the label's bytes, zero-padded to 20.
func sum(_ label: String) -> Checksum {
    let bytes = Array(label.utf8.prefix(Checksum.byteCount))
    return Checksum(bytes: bytes + Array(repeating: 0, count: Checksum.byteCount - bytes.count))!
}

let day: TimeInterval = 86_400
let t0 = Date(timeIntervalSince1970: 1_800_000_000)

func settings(
    quarantineDays: Int = 14, strictness: DeletionStrictness = .trusting, maxDelete: Int? = nil
) -> ReconcileSettings {
    try! ReconcileSettings(quarantineDays: quarantineDays, strictness: strictness, maxDelete: maxDelete)
}

func healthyScan(marker: Bool = false) -> SourceScanFacts {
    SourceScanFacts(sourceRoot: "/src", hasMarker: marker, hadMarker: marker)
}

/// Plays the lead's part across runs: keeps the stores, the last healthy snapshot and the library,
/// imports what the plan imports and trashes what it trashes.
struct Simulation {
    var state = ReconcileState()
    var snapshot: [String: Checksum] = [:]
    var library = Set<Checksum>()
    var trashed: [Checksum] = []
    var runs = 0
    var now = t0
    var settings: ReconcileSettings

    init(settings: ReconcileSettings = CairnReconcileTests.settings()) { self.settings = settings }

    @discardableResult
    mutating func run(
        _ current: [String: Checksum], scan: SourceScanFacts = healthyScan(), after interval: TimeInterval = day,
        acceptMassVanish: Bool = false
    ) -> Reconciler.Outcome {
        if runs > 0 { now = now.addingTimeInterval(interval) }
        runs += 1
        let outcome = Reconciler.reconcile(.init(
            state: state, previous: snapshot, current: current, library: library, scan: scan,
            settings: settings, now: now, runID: "run-\(runs)", isFirstRun: runs == 1,
            acceptMassVanish: acceptMassVanish))
        state = outcome.state
        if outcome.delta.advanceSnapshot { snapshot = current }
        library.formUnion(outcome.plan.importCandidates)
        for candidate in outcome.plan.deleteCandidates {
            library.remove(candidate.checksum)
            trashed.append(candidate.checksum)
        }
        return outcome
    }
}
