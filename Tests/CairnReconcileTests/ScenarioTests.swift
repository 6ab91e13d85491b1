import CairnCore
import CairnReconcile
import Foundation
import Testing

/// Several runs in a row, the way `cairn sync` lives them.
@Suite struct ScenarioTests {
    @Test func aDeletedFileIsHeldByQuarantineThenTrashed() {
        var sim = Simulation()
        sim.run(["a.jpg": sum("A"), "b.jpg": sum("B")])
        let deleted = sim.run(["b.jpg": sum("B")])
        #expect(deleted.plan.deleteCandidates.isEmpty)
        #expect(deleted.plan.heldByQuarantine == [
            QuarantineHold(checksum: sum("A"), confirmedAt: sim.now, eligibleAt: sim.now + 14 * day)])

        let stillHeld = sim.run(["b.jpg": sum("B")], after: 13 * day)
        #expect(stillHeld.plan.heldByQuarantine.map(\.checksum) == [sum("A")])
        #expect(stillHeld.state.confirmed[sum("A")] == deleted.state.confirmed[sum("A")], "the clock never resets")

        let due = sim.run(["b.jpg": sum("B")], after: day)
        #expect(due.plan.deleteCandidates.map(\.checksum) == [sum("A")])
        #expect(sim.library == [sum("B")])
    }

    @Test func aReappearingFileIsUnstampedAndKept() {
        var sim = Simulation()
        sim.run(["a.jpg": sum("A"), "b.jpg": sum("B")])
        sim.run(["b.jpg": sum("B")])
        let back = sim.run(["a-restored.jpg": sum("A"), "b.jpg": sum("B")])
        #expect(back.delta.reappeared == [sum("A")])
        #expect(!back.state.confirmed.contains(sum("A")))
        sim.run(["a-restored.jpg": sum("A"), "b.jpg": sum("B")], after: 30 * day)
        #expect(sim.trashed.isEmpty)
    }

    /// The seed's worked example: the original stays, the intermediate version is quarantined then
    /// trashed, the final version is kept.
    @Test func editRevertEdit() {
        var sim = Simulation()
        sim.run(["p.jpg": sum("O"), "keep.jpg": sum("K")])
        let edit1 = sim.run(["p.jpg": sum("E1"), "keep.jpg": sum("K")])
        #expect(edit1.delta.confirmedStamped.isEmpty, "retiring the original protects it")
        #expect(sim.library == [sum("O"), sum("E1"), sum("K")])

        let revert = sim.run(["p.jpg": sum("O"), "keep.jpg": sum("K")])
        #expect(revert.delta.confirmedStamped == [sum("E1")])
        #expect(revert.plan.heldByQuarantine.map(\.checksum) == [sum("E1")])

        let edit2 = sim.run(["p.jpg": sum("E2"), "keep.jpg": sum("K")])
        #expect(edit2.delta.confirmedStamped.isEmpty)
        #expect(edit2.plan.deleteCandidates.isEmpty)
        #expect(edit2.plan.heldByQuarantine.map(\.checksum) == [sum("E1")])

        sim.run(["p.jpg": sum("E2"), "keep.jpg": sum("K")], after: 14 * day)
        #expect(sim.trashed == [sum("E1")])
        #expect(sim.library == [sum("O"), sum("E2"), sum("K")], "one original and one current")
    }

    @Test func editEdit() {
        var sim = Simulation()
        sim.run(["p.jpg": sum("O"), "keep.jpg": sum("K")])
        sim.run(["p.jpg": sum("E1"), "keep.jpg": sum("K")])
        let second = sim.run(["p.jpg": sum("E2"), "keep.jpg": sum("K")])
        #expect(second.delta.confirmedStamped == [sum("E1")])
        sim.run(["p.jpg": sum("E2"), "keep.jpg": sum("K")], after: 14 * day)
        #expect(sim.trashed == [sum("E1")])
        #expect(sim.library == [sum("O"), sum("E2"), sum("K")])
    }

    @Test func deleteAfterEditsQuarantinesBothTheAnchorAndTheCurrentVersion() {
        var sim = Simulation()
        sim.run(["p.jpg": sum("O"), "keep.jpg": sum("K")])
        sim.run(["p.jpg": sum("E1"), "keep.jpg": sum("K")])
        let deleted = sim.run(["keep.jpg": sum("K")])
        #expect(deleted.delta.confirmedStamped == [sum("O"), sum("E1")].sorted())
        #expect(deleted.delta.anchorsReleased == ["p.jpg"])
        #expect(Set(deleted.plan.heldByQuarantine.map(\.checksum)) == [sum("O"), sum("E1")])
        #expect(deleted.plan.deleteCandidates.isEmpty)

        sim.run(["keep.jpg": sum("K")], after: 14 * day)
        #expect(Set(sim.trashed) == [sum("O"), sum("E1")])
        #expect(sim.library == [sum("K")])
    }

    @Test func theFirstRunImportsButNeverTrashesEvenWithStaleState() {
        var sim = Simulation(settings: settings(quarantineDays: 0))
        // A library that already holds content cairn "observed" (e.g. a catalog restored from backup).
        sim.state.observed = [sum("stale")]
        sim.library = [sum("stale")]
        let first = sim.run(["a.jpg": sum("A")])
        #expect(first.plan.importCandidates == [sum("A")])
        #expect(first.plan.deleteCandidates.isEmpty)
        #expect(first.plan.heldBySafetyRail.map(\.checksum) == [sum("stale")])
        #expect(sim.library.contains(sum("stale")))
    }

    @Test func aVanishedSourceIsJudgedAgainstTheLastTrustedSnapshotWhenItComesBack() {
        var sim = Simulation(settings: settings(quarantineDays: 0))
        var files: [String: Checksum] = [:]
        for index in 0..<10 { files["f\(index).jpg"] = sum("f\(index)") }
        sim.run(files)
        let unmounted = sim.run([:], scan: SourceScanFacts(sourceRoot: "/src", root: .missing))
        #expect(unmounted.plan.exitStatus == .deletionsHeldBySafetyRail)
        #expect(sim.trashed.isEmpty)
        #expect(sim.snapshot == files, "a doubtful scan never replaces the trusted snapshot")

        var backMinusOne = files
        backMinusOne["f9.jpg"] = nil
        let back = sim.run(backMinusOne)
        #expect(back.delta.confirmedStamped == [sum("f9")])
        #expect(sim.trashed == [sum("f9")])
    }

    @Test func aMassVanishHeldOnceIsAcceptedOnTheNextRun() {
        var sim = Simulation(settings: settings(quarantineDays: 0))
        var files: [String: Checksum] = [:]
        for index in 0..<10 { files["f\(index).jpg"] = sum("f\(index)") }
        sim.run(files)
        let few = files.filter { $0.key < "f4" }  // 6 of 10 gone
        #expect(sim.run(few).plan.verdict.holds.map(\.rail) == [.massVanish])
        #expect(sim.trashed.isEmpty)
        let accepted = sim.run(few, acceptMassVanish: true)
        #expect(accepted.plan.verdict.holds.isEmpty)
        #expect(sim.trashed.count == 6)
    }
}
