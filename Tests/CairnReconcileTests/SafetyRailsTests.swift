import CairnCore
import CairnReconcile
import CairnReconcileOracle
import Foundation
import Testing

/// Each rail, through the whole reconciler, against a library where one file was deleted at the
/// source long ago (so without the rail it would be trashed).
@Suite struct SafetyRailsTests {
    /// Ten files were seen; `gone` of them vanished; quarantine 0 so every confirmation is due at once.
    func reconcile(
        current: [String: Checksum]? = nil, scan: SourceScanFacts = healthyScan(), isFirstRun: Bool = false,
        settings: ReconcileSettings = CairnReconcileTests.settings(quarantineDays: 0), acceptMassVanish: Bool = false
    ) -> Reconciler.Outcome {
        var previous: [String: Checksum] = [:]
        for index in 0..<10 { previous["f\(index).jpg"] = sum("f\(index)") }
        let state = ReconcileState(observed: Set(previous.values), anchors: .init(previous))
        var defaultCurrent = previous
        defaultCurrent["f0.jpg"] = nil
        return Reconciler.reconcile(.init(
            state: state, previous: previous, current: current ?? defaultCurrent, library: Set(previous.values),
            scan: scan, settings: settings, now: t0, runID: "r1", isFirstRun: isFirstRun,
            acceptMassVanish: acceptMassVanish))
    }

    func keep(_ count: Int) -> [String: Checksum] {
        var current: [String: Checksum] = [:]
        for index in (10 - count)..<10 { current["f\(index).jpg"] = sum("f\(index)") }
        return current
    }

    @Test func withoutATrippedRailTheDeletionGoesThrough() {
        let outcome = reconcile()
        #expect(outcome.plan.deleteCandidates.map(\.checksum) == [sum("f0")])
        #expect(outcome.plan.verdict.trips.isEmpty)
        #expect(outcome.plan.exitStatus == .success)
    }

    @Test func theFirstRunNeverTrashes() {
        let outcome = reconcile(isFirstRun: true)
        #expect(outcome.plan.deleteCandidates.isEmpty)
        #expect(outcome.plan.heldBySafetyRail.map(\.checksum) == [sum("f0")])
        #expect(outcome.plan.verdict.holds.map(\.rail) == [.firstRun])
        #expect(outcome.plan.exitStatus == .success, "a first run is not an error")
    }

    @Test(arguments: [
        (SourceScanFacts.RootState.missing, SafetyRail.sourceMissing),
        (SourceScanFacts.RootState.notADirectory, SafetyRail.sourceNotADirectory),
    ])
    func aMissingOrWrongSourceRootHoldsEverything(root: SourceScanFacts.RootState, rail: SafetyRail) {
        let outcome = reconcile(current: [:], scan: SourceScanFacts(sourceRoot: "/src", root: root))
        #expect(outcome.plan.deleteCandidates.isEmpty)
        #expect(outcome.plan.heldBySafetyRail.count == 10)
        #expect(outcome.plan.verdict.holds.map(\.rail) == [rail])
        #expect(outcome.plan.verdict.holds[0].reason.contains("/src"))
        #expect(outcome.plan.exitStatus == .deletionsHeldBySafetyRail)
        #expect(outcome.delta.confirmedStamped.isEmpty)
        #expect(!outcome.delta.advanceSnapshot)
    }

    @Test func anEmptySourceHoldsEverything() {
        let outcome = reconcile(current: [:])
        #expect(outcome.plan.deleteCandidates.isEmpty)
        #expect(outcome.plan.verdict.holds.map(\.rail) == [.sourceEmpty])
        #expect(outcome.plan.verdict.holds[0].reason.contains("holds no files"))
        #expect(outcome.plan.exitStatus == .deletionsHeldBySafetyRail)
        #expect(outcome.delta.confirmedStamped.isEmpty)
    }

    @Test func aLostMarkerHoldsEverythingButAMarkerNeverSeenDoesNot() {
        let lost = reconcile(scan: SourceScanFacts(sourceRoot: "/src", hasMarker: false, hadMarker: true))
        #expect(lost.plan.deleteCandidates.isEmpty)
        #expect(lost.plan.verdict.holds.map(\.rail) == [.sourceMarkerLost])
        #expect(lost.plan.verdict.holds[0].reason.contains(".cairn-source"))
        #expect(lost.plan.exitStatus == .deletionsHeldBySafetyRail)

        let never = reconcile(scan: SourceScanFacts(sourceRoot: "/src", hasMarker: false, hadMarker: false))
        #expect(never.plan.deleteCandidates.count == 1)
    }

    @Test func moreThanTheThresholdVanishingHoldsEverything() {
        let outcome = reconcile(current: keep(4))  // 60 % gone
        #expect(outcome.plan.deleteCandidates.isEmpty)
        #expect(outcome.plan.heldBySafetyRail.count == 6)
        #expect(outcome.plan.verdict.holds.map(\.rail) == [.massVanish])
        #expect(outcome.plan.verdict.holds[0].reason.contains("6 of the last run's 10 files (60 %)"))
        #expect(outcome.plan.exitStatus == .deletionsHeldBySafetyRail)
        #expect(outcome.delta.confirmedStamped.isEmpty, "no stamps from a doubtful scan")
        #expect(!outcome.delta.advanceSnapshot, "the next run still diffs against the trusted snapshot")
    }

    @Test func exactlyTheThresholdVanishingPasses() {
        let outcome = reconcile(current: keep(5))  // 50 % gone, not more
        #expect(outcome.plan.verdict.holds.isEmpty)
        #expect(outcome.plan.deleteCandidates.count == 5)
    }

    @Test func acceptingTheMassVanishLetsTheSignalsThrough() {
        let outcome = reconcile(current: keep(4), acceptMassVanish: true)
        #expect(outcome.plan.verdict.holds.isEmpty)
        #expect(outcome.delta.confirmedStamped.count == 6)
        #expect(outcome.plan.deleteCandidates.count == 6)
    }

    @Test func aScanWithIOErrorsTrashesNothing() {
        let scan = SourceScanFacts(sourceRoot: "/src", ioErrorCount: 2, firstIOError: "f3.jpg: Input/output error")
        let outcome = reconcile(scan: scan)
        #expect(outcome.plan.deleteCandidates.isEmpty)
        #expect(outcome.plan.verdict.holds.map(\.rail) == [.scanIOErrors])
        #expect(outcome.plan.verdict.holds[0].reason.contains("f3.jpg: Input/output error"))
        #expect(outcome.plan.exitStatus == .someFilesFailed)
        #expect(outcome.delta.confirmedStamped.isEmpty)
    }

    @Test func maxDeleteCapsTheRunAndDefersTheRest() {
        let outcome = reconcile(current: keep(7), settings: settings(quarantineDays: 0, maxDelete: 2))
        #expect(outcome.plan.deleteCandidates.map(\.checksum) == [sum("f0"), sum("f1")].sorted())
        #expect(outcome.plan.deferredByCap.count == 1)
        #expect(outcome.plan.verdict.limits.map(\.rail) == [.maxDeleteCap])
        #expect(outcome.plan.verdict.limits[0].reason.contains("1 more"))
        #expect(outcome.plan.exitStatus == .success)
    }

    @Test func massOffloadWarnsAboveFiftyConfirmationsWithTheBulkExcludeCommand() {
        func run(deleting count: Int) -> Reconciler.Outcome {
            var previous: [String: Checksum] = [:]
            for index in 0..<200 { previous["f\(index).jpg"] = sum("f\(index)") }
            let current = previous.filter { Int($0.key.dropFirst().prefix { $0.isNumber })! >= count }
            return Reconciler.reconcile(.init(
                state: ReconcileState(observed: Set(previous.values)), previous: previous, current: current,
                library: Set(previous.values), scan: healthyScan(), now: t0, runID: "2026-11-22T03-00-00Z-ab12",
                isFirstRun: false))
        }
        let burst = run(deleting: 51)
        #expect(burst.plan.verdict.warnings.map(\.rail) == [.massOffload])
        #expect(burst.plan.verdict.warnings[0].reason.contains(
            "cairn pending exclude --all-confirmed-since 2026-11-22T03-00-00Z-ab12"))
        #expect(burst.plan.verdict.holds.isEmpty)
        #expect(burst.plan.heldByQuarantine.count == 51, "a warning holds nothing by itself")
        #expect(run(deleting: 50).plan.verdict.warnings.isEmpty)
    }

    @Test func railsAreReportedInAFixedOrder() {
        let scan = SourceScanFacts(sourceRoot: "/src", hasMarker: false, hadMarker: true, ioErrorCount: 1)
        let outcome = reconcile(current: keep(1), scan: scan, isFirstRun: true)
        #expect(outcome.plan.verdict.holds.map(\.rail) == [.sourceMarkerLost, .massVanish, .scanIOErrors, .firstRun])
        #expect(outcome.plan.exitStatus == .deletionsHeldBySafetyRail)
    }
}

extension SafetyVerdict {
    var trips: [RailTrip] { holds + limits + warnings }
}
