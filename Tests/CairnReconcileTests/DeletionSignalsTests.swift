import CairnCore
import CairnReconcile
import CairnReconcileOracle
import Foundation
import Testing

@Suite struct DeletionSignalsTests {
    func derive(
        previous: [String: Checksum], current: [String: Checksum], state: ReconcileState = .init(),
        healthy: Bool = true
    ) -> StoreDelta {
        DeletionSignals.derive(previous: previous, current: current, state: state, sourceIsHealthy: healthy, now: t0)
    }

    @Test func aPathGoneInAHealthyScanConfirmsItsChecksumAndReleasesItsAnchor() {
        let state = ReconcileState(anchors: .init(["a.jpg": sum("A"), "b.jpg": sum("B")]))
        let delta = derive(previous: ["a.jpg": sum("A"), "b.jpg": sum("B")], current: ["b.jpg": sum("B")], state: state)
        #expect(delta.confirmedStamped == [sum("A")])
        #expect(delta.stampedAt == t0)
        #expect(delta.anchorsReleased == ["a.jpg"])
        #expect(delta.deletedPaths == ["a.jpg"])
        #expect(delta.advanceSnapshot)
    }

    @Test func contentStillElsewhereInTheSourceIsNotConfirmed() {
        // A rename, and a deleted duplicate: the content still lives at the source.
        let delta = derive(previous: ["a.jpg": sum("A"), "d1.jpg": sum("D"), "d2.jpg": sum("D")],
                           current: ["renamed.jpg": sum("A"), "d2.jpg": sum("D")])
        #expect(delta.confirmedStamped.isEmpty)
        #expect(delta.deletedPaths == ["a.jpg", "d1.jpg"])
    }

    @Test func anUnhealthyScanStampsAndReleasesNothingAndKeepsTheSnapshot() {
        let state = ReconcileState(confirmed: .init([sum("C"): t0 - day]), anchors: .init(["a.jpg": sum("A")]))
        let delta = derive(previous: ["a.jpg": sum("A"), "e.jpg": sum("E1")],
                           current: ["e.jpg": sum("E2"), "c.jpg": sum("C")], state: state, healthy: false)
        #expect(delta.confirmedStamped.isEmpty)
        #expect(delta.anchorsReleased.isEmpty)
        #expect(!delta.advanceSnapshot)
        // What only protects is still recorded.
        #expect(delta.reappeared == [sum("C")])
        #expect(delta.anchorsAdded == ["e.jpg": sum("E1"), "c.jpg": sum("C")])
    }

    @Test func editingAwayFromTheAnchorProtectsIt() {
        let state = ReconcileState(anchors: .init(["a.jpg": sum("O")]))
        let delta = derive(previous: ["a.jpg": sum("O")], current: ["a.jpg": sum("E1")], state: state)
        #expect(delta.confirmedStamped.isEmpty)
        #expect(delta.editedPaths == ["a.jpg"])
        #expect(delta.anchorsAdded.isEmpty, "first write wins")
    }

    @Test func editingAwayFromAnIntermediateVersionQuarantinesIt() {
        let state = ReconcileState(anchors: .init(["a.jpg": sum("O")]))
        let delta = derive(previous: ["a.jpg": sum("E1")], current: ["a.jpg": sum("E2")], state: state)
        #expect(delta.confirmedStamped == [sum("E1")])
    }

    @Test func aPathMissingFromTheAnchorStoreIsAnchoredAtItsSnapshotContent() {
        // The snapshot's checksum is the earliest known: it becomes the anchor, so the edit protects it.
        let delta = derive(previous: ["a.jpg": sum("O")], current: ["a.jpg": sum("E1")])
        #expect(delta.anchorsAdded == ["a.jpg": sum("O")])
        #expect(delta.confirmedStamped.isEmpty)
    }

    @Test func anAnchoredPathMissingFromTheSnapshotIsSweptToo() {
        // The orphan sweep: the anchor store remembers a path the last snapshot lost.
        let state = ReconcileState(anchors: .init(["lost.jpg": sum("L"), "b.jpg": sum("B")]))
        let delta = derive(previous: ["b.jpg": sum("B")], current: ["b.jpg": sum("B")], state: state)
        #expect(delta.confirmedStamped == [sum("L")])
        #expect(delta.anchorsReleased == ["lost.jpg"])
    }

    @Test func anotherLivePathsAnchorIsNeverConfirmed() {
        let state = ReconcileState(anchors: .init(["a.jpg": sum("O"), "copy.jpg": sum("O")]))
        let delta = derive(previous: ["a.jpg": sum("O"), "copy.jpg": sum("E")], current: ["copy.jpg": sum("E")],
                           state: state)
        #expect(delta.confirmedStamped.isEmpty, "O is still copy.jpg's anchor")
        #expect(delta.anchorsReleased == ["a.jpg"])
    }

    @Test func alreadyConfirmedChecksumsAreNotStampedAgain() {
        let state = ReconcileState(confirmed: .init([sum("A"): t0 - 3 * day]))
        let delta = derive(previous: ["a.jpg": sum("A"), "b.jpg": sum("B")], current: [:], state: state)
        #expect(delta.confirmedStamped == [sum("B")])
    }

    @Test func observedGrowsByNewContentOnly() {
        let state = ReconcileState(observed: [sum("A")])
        let delta = derive(previous: [:], current: ["a.jpg": sum("A"), "b.jpg": sum("B")], state: state)
        #expect(delta.observedAdded == [sum("B")])
    }
}
