import CairnCore
import CairnReconcile
import Foundation

/// One run's reconciliation end to end in memory: rails, signals, store update, plan. Pure. The oracle the
/// catalogs' reconciliation in SQL is tested against (`ReconcileRunContractTests`).
extension Reconciler {
    public struct Input: Sendable {
        public var state: ReconcileState
        /// The last healthy snapshot: source-relative path → checksum.
        public var previous: [String: Checksum]
        /// This scan: source-relative path → checksum.
        public var current: [String: Checksum]
        public var library: Set<Checksum>
        /// Content another source of the library still holds: never trashed because this source lost it.
        public var heldElsewhere: Set<Checksum>
        public var scan: SourceScanFacts
        public var settings: ReconcileSettings
        public var now: Date
        public var runID: String
        public var isFirstRun: Bool
        public var acceptMassVanish: Bool

        public init(
            state: ReconcileState, previous: [String: Checksum], current: [String: Checksum], library: Set<Checksum>,
            scan: SourceScanFacts, settings: ReconcileSettings = .defaults, now: Date, runID: String,
            isFirstRun: Bool, acceptMassVanish: Bool = false, heldElsewhere: Set<Checksum> = []
        ) {
            self.heldElsewhere = heldElsewhere
            self.state = state
            self.previous = previous
            self.current = current
            self.library = library
            self.scan = scan
            self.settings = settings
            self.now = now
            self.runID = runID
            self.isFirstRun = isFirstRun
            self.acceptMassVanish = acceptMassVanish
        }
    }

    public struct Outcome: Sendable, Equatable {
        public var delta: StoreDelta
        /// The stores after this run (`input.state.applying(delta)`).
        public var state: ReconcileState
        public var plan: ReconciliationPlan
    }

    public static func reconcile(_ input: Input) -> Outcome {
        var rails = RailInputs(isFirstRun: input.isFirstRun, scan: input.scan, previous: input.previous,
                               current: input.current, acceptMassVanish: input.acceptMassVanish)
        let healthy = sourceIsHealthy(rails, settings: input.settings)

        let delta = DeletionSignals.derive(previous: input.previous, current: input.current, state: input.state,
                                           sourceIsHealthy: healthy, now: input.now)
        let state = input.state.applying(delta)
        rails.confirmedThisRun = delta.confirmedStamped.count

        let plan = ReconciliationEngine.plan(ReconciliationInput(
            observed: state.observed, currentSource: Set(input.current.values), library: input.library,
            confirmed: state.confirmed, exclusions: state.exclusions, approved: state.approved,
            heldElsewhere: input.heldElsewhere,
            protectedAnchors: state.anchors.protected(livePaths: input.current.keys),
            settings: input.settings, now: input.now, runID: input.runID, rails: rails))
        return Outcome(delta: delta, state: state, plan: plan)
    }
}
