import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMetrics
import CairnNarration
import CairnReconcile
import Foundation

/// Reads a library's metrics from its catalog: the run history, what the library holds, what reconciliation holds.
/// `cairn serve` answers `/metrics` with it; a run starts from it and ends with it. Read-only, without the lock.
public enum LibraryMetricsReader {
    /// The `library` and `source` labels: the folders' names (never a path).
    public static func labels(libraryRoot: String, sourceRoot: String?) -> (library: String, source: String) {
        func name(_ path: String) -> String {
            let last = URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
            return last.isEmpty || last == "/" ? "root" : last
        }
        return (name(libraryRoot), sourceRoot.map(name) ?? "")
    }

    /// - Parameters:
    ///   - catalog: the library's catalog, whichever backend keeps it.
    ///   - labelRoot: the library folder the labels name (an Immich destination's state lives in a folder below it).
    ///   - sourceRoot: the source whose reconciliation is reported; nil: the source of the newest run.
    ///   - quarantineDays: the quarantine in force, when known.
    public static func read(layout: LibraryLayout, catalog: any StatusCatalog, labelRoot: String? = nil, sourceRoot: String?,
                            quarantineDays: Int?) async throws -> LibraryMetrics {
        let runs = try await catalog.runs(limit: 100)
        let report = try await LibraryStatus.report(layout: layout, catalog: catalog)
        let isRunning = report.runInProgress == true
        var sourceRoot = sourceRoot
        if sourceRoot == nil, let id = runs.first?.sourceID {
            sourceRoot = try await catalog.sources().first { $0.id == id }?.rootPath
        }
        let names = labels(libraryRoot: labelRoot ?? layout.root, sourceRoot: sourceRoot)
        var metrics = LibraryMetrics(library: names.library, source: names.source)
        metrics.lastRun = report.lastRun
        metrics.runInProgress = isRunning
        metrics.lastSuccess = try await catalog.lastRun(endedIn: [.success, .someFailed, .stoppedAtErrorLimit]).map { $0.endedAt ?? $0.startedAt }

        // A run record still "running" is the run in progress if it is the newest and the lock is held, else a
        // run that was killed: it failed.
        let finished = runs.enumerated().filter { index, run in !(index == 0 && run.outcome == .running && isRunning) }.map(\.element)
        metrics.failedRunsInARow = finished.prefix { !outcome(of: $0, report: report).succeeded }.count
        metrics.lastRunOutcome = finished.first.map { outcome(of: $0, report: report) }

        metrics.libraryContent = tally(try await catalog.assetTally(broughtInBy: nil))
        if let drift = report.drift { metrics.destinationDrift = ["trashed": drift.trashed, "missing": drift.missing] }
        if let run = report.lastRun {
            metrics.importedByLastRun = tally(try await catalog.assetTally(broughtInBy: run.runID))
            metrics.bytesTransferred = try await catalog.run(id: run.runID)?.counts.bytesCopied ?? 0
            for failure in try await catalog.failures(runID: run.runID) {
                metrics.failures[FailureKey(phase: failure.phase.rawValue, reason: failure.category ?? .other), default: 0] += 1
            }
        }
        if let sourceRoot, let sourceID = try await catalog.existingSourceID(forRoot: sourceRoot) {
            metrics.reconcile = try await reconcile(catalog.pending(sourceID: sourceID), catalog: catalog)
            metrics.reconcile?.quarantineSeconds = quarantineDays.map { Double($0) * 86_400 }
        }
        return metrics
    }

    /// How the safety rails saw the source in a sync's plan.
    public static func sourceHealth(_ verdict: SafetyVerdict) -> SourceHealth {
        let rails = Set(verdict.holds.map(\.rail))
        if !rails.isDisjoint(with: [.sourceMissing, .sourceNotADirectory, .sourceMarkerLost]) { return .vanished }
        if rails.contains(.sourceEmpty) { return .empty }
        if rails.contains(.massVanish) { return .mostlyGone }
        if rails.contains(.scanIOErrors) { return .unreadable }
        return .mounted
    }

    /// How a finished run ended; a record still "running" is a run that was killed.
    static func outcome(of run: RunRecord, report: StatusReport) -> ExitStatus {
        if run.outcome == .failed, report.lastRun?.runID == run.id, case .ended(_, _, true) = report.lastRun?.status {
            return .needsAuth
        }
        return run.outcome == .running ? .failure : run.outcome.exitStatus
    }

    private static func tally(_ rows: [MediaKind: (items: Int, bytes: Int64)]) -> [MediaKind: ContentTally] {
        rows.mapValues { ContentTally(items: $0.items, bytes: $0.bytes) }
    }

    private static func reconcile(_ items: [PendingItem], catalog: any StatusCatalog) async throws -> ReconcileMetrics {
        var metrics = ReconcileMetrics()
        var oldestRunID: String?
        for item in items {
            switch item.status {
            case .eligible, .approved: metrics.trashNow += 1
            case .deferred: metrics.deferred += 1
            case .held: metrics.heldByRail += 1
            case .quarantine: metrics.heldByQuarantine += 1
            case .review:
                metrics.pendingReview += 1
                if let confirmed = item.confirmedAt {
                    metrics.oldestPendingSince = min(metrics.oldestPendingSince ?? confirmed, confirmed)
                } else if oldestRunID == nil || item.runID < oldestRunID! {
                    oldestRunID = item.runID
                }
            }
        }
        // Review items absent without proof of deletion carry no date: the run that found them dates them.
        if let oldestRunID, let run = try await catalog.run(id: oldestRunID) {
            metrics.oldestPendingSince = min(metrics.oldestPendingSince ?? run.startedAt, run.startedAt)
        }
        return metrics
    }
}
