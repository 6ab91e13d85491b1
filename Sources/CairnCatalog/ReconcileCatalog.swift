import CairnCore

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
}
