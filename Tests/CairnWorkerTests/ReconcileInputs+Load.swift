import CairnCatalog
import CairnCore
import CairnLibrary
import CairnReconcile
import CairnReconcileOracle
import Foundation

@testable import CairnSync

extension ReconcileInputs {
    /// The engine's input for `sourceID` with every set in memory, for tests that drive the pure engine against a
    /// real catalog (a sync itself reconciles in SQL: `CatalogReconciliation`).
    ///
    /// - Parameters:
    ///   - current: this scan, source-relative path → checksum.
    ///   - scan: from `probe`; its `hadMarker` is replaced by what the catalog remembers.
    static func load(
        catalog: SQLiteCatalog, sourceID: Int64, current: [String: Checksum], scan: SourceScanFacts,
        settings: ReconcileSettings, now: Date, runID: String, acceptMassVanish: Bool = false
    ) async throws -> Reconciler.Input {
        let facts = try await catalog.reconcileFacts(sourceID: sourceID)
        var scan = scan
        scan.hadMarker = facts.hadMarker
        return Reconciler.Input(
            state: try await catalog.reconcileState(sourceID: sourceID),
            previous: try await catalog.healthySnapshot(sourceID: sourceID),
            current: current, library: try await catalog.assetChecksums(), scan: scan, settings: settings, now: now,
            runID: runID, isFirstRun: facts.isFirstRun, acceptMassVanish: acceptMassVanish,
            heldElsewhere: try await catalog.checksumsHeld(bySourcesOtherThan: sourceID))
    }
}
