import CairnCore
import Foundation

/// Everything reconciliation remembers about one (source, library) pair between runs.
///
/// A plain value: the catalog persists it (or applies a `StoreDelta` to its tables); the engine
/// never touches storage.
public struct ReconcileState: Codable, Sendable, Equatable {
    /// Every checksum ever seen in this source (grows only).
    public var observed: Set<Checksum>
    public var confirmed: ConfirmedDeletions
    /// Checksums the user chose to keep in the library whatever happens at the source.
    public var exclusions: Set<Checksum>
    /// Checksums the user approved for trashing now (skips quarantine and review, not the safety rails).
    public var approved: Set<Checksum>
    public var anchors: EditAnchors

    public init(
        observed: Set<Checksum> = [], confirmed: ConfirmedDeletions = .init(), exclusions: Set<Checksum> = [],
        approved: Set<Checksum> = [], anchors: EditAnchors = .init()
    ) {
        self.observed = observed
        self.confirmed = confirmed
        self.exclusions = exclusions
        self.approved = approved
        self.anchors = anchors
    }

    /// Applies a delta with the stores' own semantics: observed is a union, confirmation and
    /// anchors are first-write-wins, reappearance removes the stamp and any pending approval.
    public func applying(_ delta: StoreDelta) -> ReconcileState {
        var next = self
        next.observed.formUnion(delta.observedAdded)
        next.confirmed.remove(delta.reappeared)
        next.approved.subtract(delta.reappeared)
        next.confirmed.confirm(delta.confirmedStamped, at: delta.stampedAt)
        for (path, checksum) in delta.anchorsAdded { next.anchors.record(checksum, at: path) }
        next.anchors.release(delta.anchorsReleased)
        return next
    }
}

// The `cairn pending` verbs, as value operations.
extension ReconcileState {
    /// `cairn pending exclude SHA1...`: keep these in the library whatever happens at the source.
    public mutating func exclude(_ checksums: some Sequence<Checksum>) {
        let checksums = Set(checksums)
        exclusions.formUnion(checksums)
        approved.subtract(checksums)
    }

    /// `cairn pending exclude --all-confirmed-since RUN`: `date` is that run's `now`, the moment
    /// its confirmations were stamped. Returns what was excluded, sorted.
    @discardableResult
    public mutating func excludeConfirmed(since date: Date) -> [Checksum] {
        let checksums = confirmed.confirmed(since: date)
        exclude(checksums)
        return checksums
    }

    /// `cairn pending approve SHA1...`: trash these at the next run that passes the safety rails,
    /// without waiting for quarantine or review. Approving undoes an exclusion.
    public mutating func approve(_ checksums: some Sequence<Checksum>) {
        let checksums = Set(checksums)
        approved.formUnion(checksums)
        exclusions.subtract(checksums)
    }
}
