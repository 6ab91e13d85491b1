import CairnCatalog
import CairnCore
import CairnLibrary
import CairnReconcile
import Foundation
import Glibc

/// Probes the source root for the safety rails, the same way for `cairn sync` and `cairn dry-run`.
public enum ReconcileInputs {
    /// The source root's state and marker, probed without following the root if it is a symlink to nowhere.
    /// `hadMarker` comes from the catalog (`CatalogReconciliation` fills it); `unreadable` are the scan's issues, "path: reason".
    public static func probe(sourceRoot: String, unreadable: [String] = []) -> SourceScanFacts {
        var info = stat()
        let root: SourceScanFacts.RootState
        if stat(sourceRoot, &info) != 0 {
            root = .missing
        } else {
            root = (info.st_mode & S_IFMT) == S_IFDIR ? .directory : .notADirectory
        }
        let hasMarker = root == .directory && FileSystem.exists(sourceRoot + "/" + SourceScanFacts.markerName)
        return SourceScanFacts(sourceRoot: sourceRoot, root: root, hasMarker: hasMarker,
                               ioErrorCount: unreadable.count, firstIOError: unreadable.first)
    }
}

/// One sync's reconciliation as a sync runs it: the catalog works out the sets in SQL over the run's tables
/// (`RunTables`), so no path → checksum map or checksum set of the source is held in memory; the
/// engine decides from what comes out, in the same order as `Reconciler.reconcile`: the rails judge the scan, a
/// healthy scan confirms deletions, then the plan.
public struct CatalogReconciliation: Sendable {
    public var plan: ReconciliationPlan
    public var signals: ScanSignals
    public var comparison: SnapshotComparison
    /// The scan's facts, with the marker the catalog remembers.
    public var scan: SourceScanFacts
    /// Whether no rail doubted the source: the scan confirms deletions and becomes the healthy snapshot.
    public var sourceIsHealthy: Bool

    /// Reads the stores and writes only the run's temporary tables, so a dry run calls it too.
    ///
    /// - Parameter runFiles: this run's files with their checksums (after hashing); empty when the source is missing.
    public static func reconcile(
        runFiles: any RunTables, catalog: any ReconcileCatalog, scan: SourceScanFacts, settings: ReconcileSettings,
        now: Date, runID: String, acceptMassVanish: Bool = false
    ) async throws -> CatalogReconciliation {
        let facts = try await catalog.reconcileFacts(sourceID: runFiles.sourceID)
        var scan = scan
        scan.hadMarker = facts.hadMarker
        let comparison = try await runFiles.compareWithHealthySnapshot()
        var rails = RailInputs(
            isFirstRun: facts.isFirstRun, scan: scan, previousFileCount: comparison.previousFiles,
            currentFileCount: comparison.currentFiles, vanishedFileCount: comparison.vanishedFiles,
            acceptMassVanish: acceptMassVanish)
        let healthy = Reconciler.sourceIsHealthy(rails, settings: settings)
        let signals = try await runFiles.scanSignals(sourceIsHealthy: healthy)
        rails.confirmedThisRun = signals.stamped.count
        let absent = try await runFiles.absentContent(stamped: signals.stamped, at: now)
        let plan = ReconciliationEngine.plan(
            absent: absent, importCandidates: try await runFiles.contentMissingFromLibrary(), settings: settings,
            now: now, runID: runID, rails: rails)
        return CatalogReconciliation(plan: plan, signals: signals, comparison: comparison, scan: scan,
                                     sourceIsHealthy: healthy)
    }

    /// Writes what the sync learned to the stores, in one commit (`RunTables.commit(_:currentFiles:)`).
    public func commit(runFiles: any RunTables) async throws {
        let changes = StoreDelta(reappeared: signals.reappeared, confirmedStamped: signals.stamped, stampedAt: plan.now,
                                 advanceSnapshot: sourceIsHealthy)
        let record = SyncRecord(runID: plan.runID, now: plan.now, changes: changes, advanceSnapshot: sourceIsHealthy,
                                sourceHasMarker: scan.hasMarker, pending: PendingEntry.entries(of: plan))
        try await runFiles.commit(record, currentFiles: comparison.currentFiles)
    }
}
