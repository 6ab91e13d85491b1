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
    public func reconcileFacts(sourceID: Int64) async throws -> ReconcileSourceFacts {
        try await read { db in try ReconcileStore.facts(db, sourceID: sourceID) }
    }
}
