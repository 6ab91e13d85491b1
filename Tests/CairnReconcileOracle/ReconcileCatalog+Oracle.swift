@testable import CairnCatalog
import CairnCore
@testable import CairnPostgresCatalog
import CairnReconcile
import CairnSync
import Foundation
import GRDB

// The reconciliation stores read back whole, and written from an in-memory outcome: what the oracle
// (`Reconciler.reconcile`) needs of a catalog, on both backends. The product never reads them so.

/// What the oracle asks of a catalog beside `ReconcileCatalog`.
public protocol ReconcileOracleCatalog: ReconcileCatalog {
    /// Everything a sync learned, in one commit: its store changes; when the scan was healthy, the new healthy
    /// snapshot (`current`, path → checksum) and the marker fact; the run ids; and what waits, for `pending list`.
    func commitSync(_ sync: SyncRecord, sourceID: Int64, current: [String: Checksum]) async throws
    func reconcileState(sourceID: Int64) async throws -> ReconcileState
    /// Applies `delta` in one commit; `runID` is recorded with each new confirmation.
    func applyReconcileDelta(_ delta: StoreDelta, sourceID: Int64, runID: String?) async throws
    /// The source at its last healthy scan: source-relative path → checksum.
    func healthySnapshot(sourceID: Int64) async throws -> [String: Checksum]
    func replaceHealthySnapshot(sourceID: Int64, with snapshot: [String: Checksum]) async throws
    func saveReconcileFacts(_ facts: ReconcileSourceFacts, sourceID: Int64) async throws
}

extension PostgresCatalog: ReconcileOracleCatalog {
    public func reconcileState(sourceID: Int64) async throws -> ReconcileState {
        return try await failing("read the reconciliation stores of source \(sourceID)") { [self] in
            var stamps: [Checksum: Date] = [:]
            let confirmed = try await client.query("""
                SELECT sha1, confirmed_at FROM cairn.reconcile_confirmed WHERE source_id = \(sourceID)
                """, logger: logger)
            for try await (hex, date) in confirmed.decode((String, Date).self) {
                if let checksum = Checksum(hex: hex) { stamps[checksum] = date }
            }
            return ReconcileState(
                observed: try await checksums(in: "cairn.reconcile_observed", sourceID: sourceID),
                confirmed: ConfirmedDeletions(stamps),
                exclusions: try await checksums(in: "cairn.reconcile_exclusion", sourceID: sourceID),
                approved: try await checksums(in: "cairn.reconcile_approval", sourceID: sourceID),
                anchors: EditAnchors(try await client.withConnection {
                    try await Self.pathMap(in: "cairn.reconcile_anchor", sourceID: sourceID, on: $0, logger: logger)
                }))
        }
    }

    public func applyReconcileDelta(_ delta: StoreDelta, sourceID: Int64, runID: String?) async throws {
        return try await failing("apply a sync's changes to the reconciliation stores of source \(sourceID)") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.apply(delta, sourceID: sourceID, runID: runID, on: connection, logger: logger)
            }
        }
    }

    public func healthySnapshot(sourceID: Int64) async throws -> [String: Checksum] {
        return try await failing("read the healthy snapshot of source \(sourceID)") { [self] in
            try await client.withConnection {
                try await Self.pathMap(in: "cairn.reconcile_healthy_snapshot", sourceID: sourceID, on: $0, logger: logger)
            }
        }
    }

    public func replaceHealthySnapshot(sourceID: Int64, with snapshot: [String: Checksum]) async throws {
        return try await failing("replace the healthy snapshot of source \(sourceID)") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.replaceHealthySnapshot(sourceID: sourceID, with: snapshot, on: connection, logger: logger)
            }
        }
    }

    public func saveReconcileFacts(_ facts: ReconcileSourceFacts, sourceID: Int64) async throws {
        return try await failing("save what reconciliation remembers of source \(sourceID)") { [self] in
            try await client.withConnection { try await Self.saveFacts(facts, sourceID: sourceID, on: $0, logger: logger) }
        }
    }
}

extension SQLiteCatalog {
    /// What the stores hold for source `sourceID`.
    public func reconcileState(sourceID: Int64) async throws -> ReconcileState {
        try await read { db in
            var stamps: [Checksum: Date] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT sha1, confirmed_at FROM reconcile_confirmed WHERE source_id = ?",
                                        arguments: [sourceID]) {
                if let checksum = Checksum(hex: row["sha1"] as String) {
                    stamps[checksum] = StoredDate.date(row["confirmed_at"] as DatabaseValue)
                }
            }
            return ReconcileState(
                observed: try ReconcileStore.checksums(db, table: "reconcile_observed", sourceID: sourceID),
                confirmed: ConfirmedDeletions(stamps),
                exclusions: try ReconcileStore.checksums(db, table: "reconcile_exclusion", sourceID: sourceID),
                approved: try ReconcileStore.checksums(db, table: "reconcile_approval", sourceID: sourceID),
                anchors: EditAnchors(try ReconcileStore.pathMap(db, table: "reconcile_anchor", sourceID: sourceID)))
        }
    }

    /// Everything a sync learned, in one transaction (see `commitSync(_:sourceID:current:)`).
    public func commit(_ outcome: Reconciler.Outcome, sourceID: Int64, current: [String: Checksum],
                       scan: SourceScanFacts) async throws {
        try await commitSync(SyncRecord(outcome, scan: scan), sourceID: sourceID, current: current)
    }
}

extension SyncRecord {
    init(_ outcome: Reconciler.Outcome, scan: SourceScanFacts) {
        self.init(runID: outcome.plan.runID, now: outcome.plan.now, changes: outcome.delta,
                  advanceSnapshot: outcome.delta.advanceSnapshot, sourceHasMarker: scan.hasMarker,
                  pending: PendingEntry.entries(of: outcome.plan))
    }
}

