import CairnCore
import Foundation

/// A catalog's reconciliation stores, per source: what a sync loads (`ReconcileState`), the changes it writes back
/// (`StoreDelta`, with the stores' own semantics, which `ReconcileState.applying` states in memory), the source as
/// it looked at its last healthy scan, and the safety rails' memory of the source.
public protocol ReconcileCatalog: Sendable {
    func reconcileState(sourceID: Int64) async throws -> ReconcileState
    /// Applies `delta` in one commit; `runID` is recorded with each new confirmation.
    func applyReconcileDelta(_ delta: StoreDelta, sourceID: Int64, runID: String?) async throws
    /// The source at its last healthy scan: source-relative path → checksum.
    func healthySnapshot(sourceID: Int64) async throws -> [String: Checksum]
    func replaceHealthySnapshot(sourceID: Int64, with snapshot: [String: Checksum]) async throws
    func reconcileFacts(sourceID: Int64) async throws -> ReconcileSourceFacts
    func saveReconcileFacts(_ facts: ReconcileSourceFacts, sourceID: Int64) async throws

    /// Everything a sync learned, in one commit: its store changes; when the scan was healthy, the new healthy
    /// snapshot (`current`, path → checksum) and the marker fact; the run ids; and what waits, for `pending list`.
    func commitSync(_ sync: SyncRecord, sourceID: Int64, current: [String: Checksum]) async throws
    /// What waits, for one source or all, as `cairn pending list` orders it.
    func pending(sourceID: Int64?) async throws -> [PendingItem]
    /// Drops checksums from every source's waiting list (they were trashed, or a person decided).
    func removePending(_ checksums: [Checksum]) async throws
    /// `cairn pending approve`: only checksums a source has observed; undoes an exclusion.
    func approve(_ checksums: [Checksum], sourceIDs: [Int64], at now: Date) async throws
    /// `cairn pending exclude`: kept whatever happens at the source; undoes an approval.
    func exclude(_ checksums: [Checksum], sourceIDs: [Int64], at now: Date) async throws
    /// `cairn pending exclude --all-confirmed-since RUN`: every deletion confirmed by that run or later; sorted.
    func excludeConfirmed(sinceRunID runID: String, sourceIDs: [Int64], at now: Date) async throws -> [Checksum]
}

extension SQLiteCatalog: ReconcileCatalog {
    private var store: ReconcileStore { ReconcileStore(catalog: catalog) }

    public func reconcileState(sourceID: Int64) async throws -> ReconcileState {
        try await BlockingPool.run { [store] in try store.loadState(sourceID: sourceID) }
    }

    public func applyReconcileDelta(_ delta: StoreDelta, sourceID: Int64, runID: String?) async throws {
        try await BlockingPool.run { [store] in try store.apply(delta, sourceID: sourceID, runID: runID) }
    }

    public func healthySnapshot(sourceID: Int64) async throws -> [String: Checksum] {
        try await BlockingPool.run { [store] in try store.healthySnapshot(sourceID: sourceID) }
    }

    public func replaceHealthySnapshot(sourceID: Int64, with snapshot: [String: Checksum]) async throws {
        try await BlockingPool.run { [store] in try store.replaceHealthySnapshot(sourceID: sourceID, with: snapshot) }
    }

    public func reconcileFacts(sourceID: Int64) async throws -> ReconcileSourceFacts {
        try await BlockingPool.run { [store] in try store.facts(sourceID: sourceID) }
    }

    public func saveReconcileFacts(_ facts: ReconcileSourceFacts, sourceID: Int64) async throws {
        try await BlockingPool.run { [store] in try store.saveFacts(facts, sourceID: sourceID) }
    }

    public func commitSync(_ sync: SyncRecord, sourceID: Int64, current: [String: Checksum]) async throws {
        try await BlockingPool.run { [store] in try store.commit(sync, sourceID: sourceID, current: current) }
    }

    public func pending(sourceID: Int64?) async throws -> [PendingItem] {
        try await BlockingPool.run { [store] in try store.pending(sourceID: sourceID) }
    }

    public func removePending(_ checksums: [Checksum]) async throws {
        try await BlockingPool.run { [store] in try store.removePending(checksums) }
    }

    public func approve(_ checksums: [Checksum], sourceIDs: [Int64], at now: Date) async throws {
        try await BlockingPool.run { [store] in try store.approve(checksums, sourceIDs: sourceIDs, at: now) }
    }

    public func exclude(_ checksums: [Checksum], sourceIDs: [Int64], at now: Date) async throws {
        try await BlockingPool.run { [store] in try store.exclude(checksums, sourceIDs: sourceIDs, at: now) }
    }

    public func excludeConfirmed(sinceRunID runID: String, sourceIDs: [Int64], at now: Date) async throws -> [Checksum] {
        try await BlockingPool.run { [store] in try store.excludeConfirmed(sinceRunID: runID, sourceIDs: sourceIDs, at: now) }
    }
}
