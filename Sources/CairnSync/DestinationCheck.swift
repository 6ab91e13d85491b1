import CairnCatalog
import CairnCore
import CairnImport
import CairnLibrary
import CairnNarration
import CairnStages
import Foundation

/// A sync's check of its destination against what cairn believes it brought there, before the walk: a full check
/// every `check_destination_days` (or with `--check-destination`), the destination's trash since the last check
/// on the other runs. What it finds is recorded as drift and reported; with `--destination-drift restore`, what a
/// source still holds is brought back (from the destination's trash) or forgotten so that this run's walk brings
/// it in again.
struct DestinationCheck {
    let destination: any ImportDestination
    let policy: DestinationCheckPolicy
    let library: Library
    let catalog: any ImportCatalog
    let runID: String
    let now: Date

    func run() async throws -> DestinationDrift {
        let lastFull = try await catalog.lastDestinationCheck(.full)
        let kind = policy.kind(lastFull: lastFull, now: now)
        let since = try await catalog.lastDestinationCheck(.trash)
            .map { $0.addingTimeInterval(-DestinationCheckPolicy.trashLookBehind) }
        let found = try await destination.findDrift(kind, since: since, library: library, catalog: catalog, now: now)
        try await catalog.recordDestinationCheck(kind, found: found, at: now)
        var report = DestinationDrift(check: kind)
        var drift = try await catalog.destinationDrift()
        let missing = drift.count { $0.state == .missing }
        if policy.mending == .restore, Self.looksUnmounted(missing: missing, assets: try await catalog.assetCount()) {
            // An unmounted originals disk, a wrong server or account: bringing it all in again is not mending.
            report.mendingHeld = "\(missing) of the destination's assets are missing at once (an unmounted disk, "
                + "another server or account?): nothing brought back this run"
        } else if policy.mending == .restore, !drift.isEmpty {
            let held = try await catalog.heldByAnySource(Set(drift.map(\.checksum)))
            let trashed = drift.filter { $0.state == .trashed && held.contains($0.checksum) }.map(\.checksum)
            let lost = drift.filter { $0.state == .missing && held.contains($0.checksum) }.map(\.checksum)
            let restored = try await destination.restoreDrift(trashed, runID: runID, library: library, catalog: catalog,
                                                              now: now)
            try await catalog.clearDrift(restored)
            try await catalog.forgetLostContent(lost)
            report.restored = restored.count
            report.broughtInAgain = lost.count
            drift = try await catalog.destinationDrift()
        }
        report.trashed = drift.count { $0.state == .trashed }
        report.missing = drift.count { $0.state == .missing }
        return report
    }

    /// More than half of the destination gone at once, past a handful: the shape of a disk or server that is not
    /// the one cairn wrote to, as the mass-vanish rail judges a source.
    static func looksUnmounted(missing: Int, assets: Int) -> Bool {
        missing > 10 && missing * 2 > max(assets, 1)
    }
}
