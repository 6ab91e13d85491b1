import CairnCore
import Foundation

/// Turns the difference between the last healthy snapshot and this scan into store operations.
///
/// - A path gone in a healthy scan is a *confirmed* deletion: its last checksum and its edit anchor
///   are stamped, unless that content still lives elsewhere in the source or is another live path's anchor.
/// - A path whose checksum changed is an edit: the old checksum is its anchor (protected while the
///   path lives) or an intermediate version (stamped, so it goes through quarantine).
/// - A confirmed checksum seen again is unstamped.
/// - Anchors whose paths are no longer listed are released even if the last snapshot missed them:
///   that sweep runs on every healthy scan, so no deletion hides between snapshots.
///
/// When the source is not healthy nothing is stamped or released; reappearances and new anchors
/// only ever protect, so they are recorded in any scan.
public enum DeletionSignals {
    public static func derive(
        previous: [String: Checksum],
        current: [String: Checksum],
        state: ReconcileState,
        sourceIsHealthy: Bool,
        now: Date
    ) -> StoreDelta {
        let currentChecksums = Set(current.values)

        let observedAdded = currentChecksums.subtracting(state.observed).sorted()
        let reappeared = currentChecksums.filter { state.confirmed.contains($0) || state.approved.contains($0) }.sorted()

        // The first checksum ever seen at a path: the snapshot's, if the anchor store missed it.
        var anchorsAdded: [String: Checksum] = [:]
        for (path, checksum) in current where state.anchors[path] == nil {
            anchorsAdded[path] = previous[path] ?? checksum
        }

        guard sourceIsHealthy else {
            return StoreDelta(observedAdded: observedAdded, reappeared: reappeared, stampedAt: now,
                              anchorsAdded: anchorsAdded, advanceSnapshot: false)
        }

        func anchor(of path: String) -> Checksum? { state.anchors[path] ?? anchorsAdded[path] }

        var retired = Set<Checksum>()
        var deletedPaths: [String] = []
        var released: [String] = []
        for path in Set(previous.keys).union(state.anchors.byPath.keys) where current[path] == nil {
            deletedPaths.append(path)
            if let last = previous[path] { retired.insert(last) }
            if let anchored = state.anchors[path] {
                retired.insert(anchored)
                released.append(path)
            }
        }

        var editedPaths: [String] = []
        for (path, checksum) in current {
            guard let old = previous[path], old != checksum else { continue }
            editedPaths.append(path)
            if old != anchor(of: path) { retired.insert(old) }
        }

        var protected = Set<Checksum>()
        for path in current.keys { if let anchored = anchor(of: path) { protected.insert(anchored) } }

        let stamped = retired
            .subtracting(currentChecksums)
            .subtracting(protected)
            .filter { !state.confirmed.contains($0) }
            .sorted()

        return StoreDelta(
            observedAdded: observedAdded, reappeared: reappeared, confirmedStamped: stamped, stampedAt: now,
            anchorsAdded: anchorsAdded, anchorsReleased: released.sorted(), advanceSnapshot: true,
            deletedPaths: deletedPaths.sorted(), editedPaths: editedPaths.sorted())
    }
}
