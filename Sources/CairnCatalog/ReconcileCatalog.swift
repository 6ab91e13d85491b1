import CairnCore
import Foundation

/// A catalog's reconciliation stores, per source: what the safety rails remember of the source, and what waits for a
/// person. A sync commits what it learned through its run tables (`RunTables.commit`); the stores written from an
/// in-memory outcome and read back whole, for the oracle, are the tests' (`CairnReconcileOracle`).
public protocol ReconcileCatalog: Sendable {
    func reconcileFacts(sourceID: Int64) async throws -> ReconcileSourceFacts

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

    public func reconcileFacts(sourceID: Int64) async throws -> ReconcileSourceFacts {
        try await BlockingPool.run { [store] in try store.facts(sourceID: sourceID) }
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
