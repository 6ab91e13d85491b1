import CairnCore
import CairnReconcile
import CairnReconcileOracle
import Foundation
import Testing

@Suite struct StoreSemanticsTests {
    @Test func confirmingIsFirstWriteWins() {
        var confirmed = ConfirmedDeletions()
        let first = confirmed.confirm([sum("a")], at: t0)
        let second = confirmed.confirm([sum("a"), sum("b")], at: t0 + 5 * day)
        #expect(first == [sum("a")])
        #expect(second == [sum("b")])
        #expect(confirmed[sum("a")] == t0)
        #expect(confirmed[sum("b")] == t0 + 5 * day)
    }

    @Test func reappearanceRemovesTheStampAndAFreshConfirmationStartsANewClock() {
        var confirmed = ConfirmedDeletions([sum("a"): t0])
        confirmed.remove([sum("a")])
        #expect(!confirmed.contains(sum("a")))
        confirmed.confirm([sum("a")], at: t0 + day)
        #expect(confirmed[sum("a")] == t0 + day)
    }

    @Test func confirmedSinceSelectsStampsAtOrAfterTheDate() {
        let confirmed = ConfirmedDeletions([sum("old"): t0, sum("edge"): t0 + day, sum("new"): t0 + 2 * day])
        #expect(confirmed.confirmed(since: t0 + day) == [sum("edge"), sum("new")].sorted())
    }

    @Test func anchorsAreFirstWriteWinsAndReleasedByPath() {
        var anchors = EditAnchors()
        let recorded = anchors.record(sum("O"), at: "a.jpg")
        let overwritten = anchors.record(sum("E"), at: "a.jpg")
        #expect(recorded)
        #expect(!overwritten)
        #expect(anchors["a.jpg"] == sum("O"))
        anchors.record(sum("X"), at: "b.jpg")
        #expect(anchors.protected(livePaths: ["a.jpg"]) == [sum("O")])
        anchors.release(["a.jpg"])
        #expect(anchors["a.jpg"] == nil)
        #expect(anchors["b.jpg"] == sum("X"))
    }

    @Test func applyingADeltaKeepsEachStoresSemantics() {
        let state = ReconcileState(
            observed: [sum("a")], confirmed: .init([sum("old"): t0, sum("back"): t0]),
            approved: [sum("back")], anchors: .init(["p": sum("a")]))
        let delta = StoreDelta(
            observedAdded: [sum("b")], reappeared: [sum("back")], confirmedStamped: [sum("old"), sum("new")],
            stampedAt: t0 + day, anchorsAdded: ["p": sum("z"), "q": sum("b")], anchorsReleased: ["gone"],
            advanceSnapshot: true)
        let next = state.applying(delta)
        #expect(next.observed == [sum("a"), sum("b")])
        #expect(next.confirmed[sum("old")] == t0, "re-confirming never resets the clock")
        #expect(next.confirmed[sum("new")] == t0 + day)
        #expect(!next.confirmed.contains(sum("back")))
        #expect(next.approved.isEmpty)
        #expect(next.anchors["p"] == sum("a"))
        #expect(next.anchors["q"] == sum("b"))
    }

    @Test func stateRoundTripsThroughJSON() throws {
        let state = ReconcileState(
            observed: [sum("a"), sum("b")], confirmed: .init([sum("a"): t0]), exclusions: [sum("x")],
            approved: [sum("y")], anchors: .init(["dir/a.jpg": sum("a")]))
        let data = try JSONEncoder().encode(state)
        #expect(try JSONDecoder().decode(ReconcileState.self, from: data) == state)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(sum("a").hex), "confirmed stamps are keyed by hex")
    }

    @Test func settingsDecodeMissingKeysAsDefaults() throws {
        let decoded = try JSONDecoder().decode(ReconcileSettings.self, from: Data(#"{"strictness":"strict"}"#.utf8))
        #expect(decoded.quarantineDays == 14)
        #expect(decoded.strictness == .strict)
        #expect(decoded.maxDelete == nil)
        #expect(decoded.vanishThreshold == 0.5)
        #expect(decoded.massOffloadThreshold == 50)
        #expect(try JSONDecoder().decode(ReconcileSettings.self, from: Data("{}".utf8)) == .defaults)
    }

    @Test func settingsRejectValuesOutOfRange() {
        #expect(throws: ReconcileSettingsError.self) { try ReconcileSettings(quarantineDays: 91) }
        #expect(throws: ReconcileSettingsError.self) { try ReconcileSettings(quarantineDays: -1) }
        #expect(throws: ReconcileSettingsError.self) { try ReconcileSettings(maxDelete: -1) }
        #expect(throws: ReconcileSettingsError.self) { try ReconcileSettings(vanishThreshold: 1.5) }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ReconcileSettings.self, from: Data(#"{"quarantineDays":120}"#.utf8))
        }
        #expect((try? ReconcileSettings(quarantineDays: 0))?.quarantineDays == 0)
        #expect((try? ReconcileSettings(quarantineDays: 90))?.quarantineDays == 90)
    }
}

@Suite struct PendingVerbTests {
    @Test func bulkExcludeProtectsEveryConfirmationSinceTheRun() {
        var sim = Simulation(settings: settings(quarantineDays: 0))
        sim.run(["a.jpg": sum("A"), "b.jpg": sum("B"), "c.jpg": sum("C")])
        sim.settings = settings(quarantineDays: 5)
        sim.run(["b.jpg": sum("B"), "c.jpg": sum("C")])
        let burstTime = sim.now.addingTimeInterval(day)
        sim.run(["c.jpg": sum("C")])
        #expect(sim.now == burstTime)

        let excluded = sim.state.excludeConfirmed(since: burstTime)
        #expect(excluded == [sum("B")])
        let later = sim.run(["c.jpg": sum("C")], after: 10 * day)
        #expect(later.plan.deleteCandidates.map(\.checksum) == [sum("A")])
        #expect(sim.library.contains(sum("B")))
    }

    @Test func approvingAndExcludingUndoEachOther() {
        var state = ReconcileState()
        state.exclude([sum("x")])
        state.approve([sum("x")])
        #expect(state.approved == [sum("x")])
        #expect(state.exclusions.isEmpty)
        state.exclude([sum("x")])
        #expect(state.approved.isEmpty)
        #expect(state.exclusions == [sum("x")])
    }

    @Test func planSummaryCountsEachBucket() {
        let plan = ReconciliationPlan(
            runID: "r", now: t0, importCandidates: [sum("i")],
            deleteCandidates: [DeleteCandidate(checksum: sum("d"), basis: .unconfirmed)],
            heldByQuarantine: [QuarantineHold(checksum: sum("q"), confirmedAt: t0, eligibleAt: t0 + 14 * day)])
        #expect(plan.summary == "1 to import · 1 to trash · 1 held by quarantine (next eligible 2027-01-29T08:00:00Z) · 0 pending review")
    }
}
