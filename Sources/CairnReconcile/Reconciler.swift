import CairnCore
import Foundation

/// One run's reconciliation: whether the source is healthy enough to confirm deletions. (The whole run in
/// memory, `reconcile`, is the tests' oracle; a sync decides in the catalog's SQL: `CatalogReconciliation`.)
public enum Reconciler {
    /// Whether the scan may confirm deletions and become the healthy snapshot: no rail doubts the source.
    public static func sourceIsHealthy(_ rails: RailInputs, settings: ReconcileSettings) -> Bool {
        !SafetyRails.assessSource(rails, settings: settings).contains { $0.rail.doubtsTheSource }
    }
}
