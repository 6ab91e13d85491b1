import Foundation

/// What one run changes in the reconciliation stores, as store operations the catalog can apply
/// in one transaction (`INSERT OR IGNORE` for the first-write-wins ones).
public struct StoreDelta: Codable, Sendable, Equatable {
    /// Checksums seen for the first time (union into observed).
    public var observedAdded: [Checksum]
    /// Checksums seen again after being confirmed deleted: remove their stamp and any approval.
    public var reappeared: [Checksum]
    /// Checksums newly confirmed deleted, all stamped at `stampedAt` (first write wins).
    public var confirmedStamped: [Checksum]
    public var stampedAt: Date
    /// Anchors for paths that had none (first write wins).
    public var anchorsAdded: [String: Checksum]
    /// Paths that died: their anchors are released.
    public var anchorsReleased: [String]
    /// Whether this scan may replace the last healthy snapshot. False when a rail doubts the source:
    /// the next run must still diff against what the source looked like when it was last trusted.
    public var advanceSnapshot: Bool

    // Explanations for narration: what the signals saw.
    /// Source paths gone since the last healthy snapshot (or still anchored but not found).
    public var deletedPaths: [String]
    /// Source paths whose content changed.
    public var editedPaths: [String]

    public init(
        observedAdded: [Checksum] = [], reappeared: [Checksum] = [], confirmedStamped: [Checksum] = [],
        stampedAt: Date, anchorsAdded: [String: Checksum] = [:], anchorsReleased: [String] = [],
        advanceSnapshot: Bool, deletedPaths: [String] = [], editedPaths: [String] = []
    ) {
        self.observedAdded = observedAdded
        self.reappeared = reappeared
        self.confirmedStamped = confirmedStamped
        self.stampedAt = stampedAt
        self.anchorsAdded = anchorsAdded
        self.anchorsReleased = anchorsReleased
        self.advanceSnapshot = advanceSnapshot
        self.deletedPaths = deletedPaths
        self.editedPaths = editedPaths
    }
}
