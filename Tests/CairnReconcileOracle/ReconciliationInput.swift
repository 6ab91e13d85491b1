import CairnCore
import CairnReconcile
import Foundation

// The engine decided from sets held in memory: the test oracle the catalogs' SQL (`CatalogReconciliation`) is
// checked against. The product's sync never gathers these sets.

/// Everything the engine decides from. Plain values; the caller gathers them from the catalog and the scan.
public struct ReconciliationInput: Sendable {
    public var observed: Set<Checksum>
    /// Checksums present in the source now.
    public var currentSource: Set<Checksum>
    /// Checksums the library holds (originals not in its trash).
    public var library: Set<Checksum>
    public var confirmed: ConfirmedDeletions
    public var exclusions: Set<Checksum>
    public var approved: Set<Checksum>
    /// Content another source of the same library still holds.
    public var heldElsewhere: Set<Checksum>
    /// Anchors of the paths alive now.
    public var protectedAnchors: Set<Checksum>
    public var settings: ReconcileSettings
    public var now: Date
    public var runID: String
    public var rails: RailInputs

    public init(
        observed: Set<Checksum>, currentSource: Set<Checksum>, library: Set<Checksum>,
        confirmed: ConfirmedDeletions, exclusions: Set<Checksum> = [], approved: Set<Checksum> = [],
        heldElsewhere: Set<Checksum> = [], protectedAnchors: Set<Checksum> = [], settings: ReconcileSettings = .defaults, now: Date, runID: String,
        rails: RailInputs
    ) {
        self.observed = observed
        self.currentSource = currentSource
        self.library = library
        self.confirmed = confirmed
        self.exclusions = exclusions
        self.approved = approved
        self.heldElsewhere = heldElsewhere
        self.protectedAnchors = protectedAnchors
        self.settings = settings
        self.now = now
        self.runID = runID
        self.rails = rails
    }
}

extension ReconciliationEngine {
    public static func plan(_ input: ReconciliationInput) -> ReconciliationPlan {
        let importCandidates = input.currentSource.subtracting(input.library).sorted()

        // Only what cairn saw in this source, still in the library, gone from the source, not protected,
        // and not still held by another source of the library (one library, many sources).
        let candidates = input.observed
            .intersection(input.library)
            .subtracting(input.currentSource)
            .subtracting(input.heldElsewhere)
            .subtracting(input.exclusions)
            .subtracting(input.protectedAnchors)
        let absent = candidates.map {
            AbsentContent(checksum: $0, confirmedAt: input.confirmed[$0], approved: input.approved.contains($0))
        }
        return plan(absent: absent, importCandidates: importCandidates, settings: input.settings, now: input.now,
                    runID: input.runID, rails: input.rails)
    }
}
