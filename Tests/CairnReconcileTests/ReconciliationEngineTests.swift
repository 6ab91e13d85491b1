import CairnCore
import CairnReconcile
import CairnReconcileOracle
import Foundation
import Testing

@Suite struct ReconciliationEngineTests {
    let rails = RailInputs(isFirstRun: false, scan: healthyScan(), previousFileCount: 10, currentFileCount: 10,
                           vanishedFileCount: 0)

    func plan(
        observed: Set<Checksum>, current: Set<Checksum> = [], library: Set<Checksum>? = nil,
        confirmed: [Checksum: Date] = [:], exclusions: Set<Checksum> = [], approved: Set<Checksum> = [],
        anchors: Set<Checksum> = [], settings: ReconcileSettings = CairnReconcileTests.settings(), now: Date = t0
    ) -> ReconciliationPlan {
        ReconciliationEngine.plan(ReconciliationInput(
            observed: observed, currentSource: current, library: library ?? observed.union(current),
            confirmed: .init(confirmed), exclusions: exclusions, approved: approved, protectedAnchors: anchors,
            settings: settings, now: now, runID: "r", rails: rails))
    }

    @Test func importCandidatesAreSourceContentTheLibraryLacks() {
        let result = plan(observed: [], current: [sum("new"), sum("have")], library: [sum("have")])
        #expect(result.importCandidates == [sum("new")])
    }

    @Test func onlyObservedLibraryContentGoneFromTheSourceIsACandidate() {
        let result = plan(
            observed: [sum("gone"), sum("here"), sum("notInLibrary")], current: [sum("here")],
            library: [sum("gone"), sum("here"), sum("neverObserved")])
        #expect(result.deleteCandidates.map(\.checksum) == [sum("gone")])
        #expect(result.deleteCandidates[0].basis == .unconfirmed)
    }

    @Test func contentAnotherSourceHoldsIsNeverACandidateEvenApprovedOrConfirmed() {
        let elsewhere = sum("shared")
        let result = ReconciliationEngine.plan(ReconciliationInput(
            observed: [elsewhere, sum("gone")], currentSource: [], library: [elsewhere, sum("gone")],
            confirmed: .init([elsewhere: t0 - 90 * day]), approved: [elsewhere], heldElsewhere: [elsewhere],
            settings: CairnReconcileTests.settings(), now: t0, runID: "r", rails: rails))
        #expect(result.deleteCandidates.map(\.checksum) == [sum("gone")])
        #expect(result.heldByQuarantine.isEmpty && result.pendingReview.isEmpty)
    }

    @Test func quarantineBoundary() {
        let confirmedAt = t0
        let eligibleAt = t0 + 14 * day
        let before = plan(observed: [sum("x")], confirmed: [sum("x"): confirmedAt], now: eligibleAt - 1)
        #expect(before.deleteCandidates.isEmpty)
        #expect(before.heldByQuarantine == [QuarantineHold(checksum: sum("x"), confirmedAt: confirmedAt, eligibleAt: eligibleAt)])

        let at = plan(observed: [sum("x")], confirmed: [sum("x"): confirmedAt], now: eligibleAt)
        #expect(at.heldByQuarantine.isEmpty)
        #expect(at.deleteCandidates == [DeleteCandidate(checksum: sum("x"), basis: .confirmed, confirmedAt: confirmedAt)])
    }

    @Test func quarantineZeroMakesAConfirmationDueAtOnce() {
        let result = plan(observed: [sum("x")], confirmed: [sum("x"): t0], settings: settings(quarantineDays: 0))
        #expect(result.deleteCandidates.map(\.checksum) == [sum("x")])
    }

    @Test func quarantineNinetyDays() {
        let settings = settings(quarantineDays: 90)
        #expect(plan(observed: [sum("x")], confirmed: [sum("x"): t0], settings: settings, now: t0 + 89 * day)
            .heldByQuarantine.first?.eligibleAt == t0 + 90 * day)
        #expect(plan(observed: [sum("x")], confirmed: [sum("x"): t0], settings: settings, now: t0 + 90 * day)
            .deleteCandidates.count == 1)
    }

    @Test func trustingTrashesUnconfirmedStrictSendsThemToReview() {
        let observed: Set = [sum("confirmed"), sum("unconfirmed")]
        let confirmed = [sum("confirmed"): t0 - 20 * day]
        let trusting = plan(observed: observed, confirmed: confirmed, settings: settings(strictness: .trusting))
        #expect(Set(trusting.deleteCandidates.map(\.checksum)) == observed)
        #expect(trusting.pendingReview.isEmpty)

        let strict = plan(observed: observed, confirmed: confirmed, settings: settings(strictness: .strict))
        #expect(strict.deleteCandidates.map(\.checksum) == [sum("confirmed")])
        #expect(strict.pendingReview == [ReviewItem(checksum: sum("unconfirmed"))])
    }

    @Test func strictStillHoldsConfirmedItemsInQuarantine() {
        let result = plan(observed: [sum("x")], confirmed: [sum("x"): t0 - day], settings: settings(strictness: .strict))
        #expect(result.heldByQuarantine.map(\.checksum) == [sum("x")])
        #expect(result.pendingReview.isEmpty)
        #expect(result.deleteCandidates.isEmpty)
    }

    @Test func exclusionsAndProtectedAnchorsAreNeverCandidates() {
        let result = plan(
            observed: [sum("excluded"), sum("anchor"), sum("plain")],
            confirmed: [sum("excluded"): t0 - 30 * day, sum("anchor"): t0 - 30 * day],
            exclusions: [sum("excluded")], anchors: [sum("anchor")])
        #expect(result.deleteCandidates.map(\.checksum) == [sum("plain")])
        #expect(result.heldByQuarantine.isEmpty)
        #expect(result.pendingReview.isEmpty)
    }

    @Test func approvalSkipsQuarantineAndReview() {
        let result = plan(
            observed: [sum("inQuarantine"), sum("unconfirmed")], confirmed: [sum("inQuarantine"): t0],
            approved: [sum("inQuarantine"), sum("unconfirmed")], settings: settings(strictness: .strict))
        #expect(result.deleteCandidates.map(\.basis) == [.approved, .approved])
        #expect(result.heldByQuarantine.isEmpty)
        #expect(result.pendingReview.isEmpty)
    }

    @Test func trashOrderIsApprovedThenOldestConfirmedThenUnconfirmed() {
        let result = plan(
            observed: [sum("u"), sum("newer"), sum("older"), sum("ok")],
            confirmed: [sum("newer"): t0 - 15 * day, sum("older"): t0 - 40 * day], approved: [sum("ok")])
        #expect(result.deleteCandidates.map(\.checksum) == [sum("ok"), sum("older"), sum("newer"), sum("u")])
    }

    @Test func sameInputGivesTheSamePlanByteForByte() throws {
        var observed = Set<Checksum>(), confirmed: [Checksum: Date] = [:]
        for index in 0..<300 {
            observed.insert(sum("c\(index)"))
            if index % 3 == 0 { confirmed[sum("c\(index)")] = t0 - Double(index % 30) * day }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let first = try encoder.encode(plan(observed: observed, confirmed: confirmed, settings: settings(maxDelete: 40)))
        for _ in 0..<5 {
            // Fresh sets hash in a different order each time; the plan must not care.
            let again = try encoder.encode(plan(
                observed: Set(observed.shuffled()), confirmed: confirmed, settings: settings(maxDelete: 40)))
            #expect(again == first)
        }
    }
}
