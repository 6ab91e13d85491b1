import CairnCatalog
import CairnCore
import CairnLibrary
import CairnNarration
import CairnScanner
import Foundation

/// The end of a run: the snapshot and the run record, or the record of a run that stopped on an error.
extension ImportRun {
    /// Writes the snapshot and the run record; a file that failed is left out of the snapshot so the next run reads it again.
    /// - Parameter held: set by a sync whose safety rail held deletions: the run's outcome and the reason.
    package func finish(_ context: Context, hashed: Hashed, imported: Imported, plan: ContentPlan, review: ReviewInfo? = nil,
                held: String? = nil) async throws -> ImportSummary {
        narrator.phaseStarted(.finalizing)
        // The checksums were saved as hashing went; files that failed since leave the cache.
        let removed = Set(imported.failures.map(\.relativePath)).sorted() + hashed.prepared.vanished
        try await catalog.updateSnapshot(sourceID: context.sourceID, upserting: [], removing: removed)
        try await catalog.markSnapshotContentInLibrary(sourceID: context.sourceID)

        let failures = (hashed.failures + imported.failures).sorted { $0.relativePath < $1.relativePath }
        // The narration's counts, with what only the end of the run knows.
        var counts = narrator.counts
        counts.filesSeen = hashed.prepared.match.files
        counts.hashed = hashed.hashedCount
        counts.bytesHashed = hashed.bytesHashed
        counts.imported = imported.ready + imported.archived
        counts.archived = imported.archived
        // From the outcomes, not the plan: content an earlier, killed run had brought in counts as imported
        // when this run finished it.
        counts.restored = options.destination.restoredFromTrash
        counts.duplicates = max(0, (imported.outcomeCounts[.duplicate] ?? 0) - counts.restored)
        counts.unchanged = imported.outcomeCounts[.unchanged] ?? 0
        counts.skipped = hashed.report.otherFiles + hashed.report.symlinksSkipped.count + imported.heldBack.count
            + hashed.report.settlingArchives.count
        counts.failed = failures.count
        counts.bytesCopied = imported.bytesCopied
        let keptWithoutPreview = self.keptWithoutPreview.all
        counts.keptWithoutPreview = keptWithoutPreview.count

        var record = context.record
        record.counts = counts
        let interrupted = imported.completion == .interrupted
        record.outcome = switch imported.completion {
        case .interrupted, .stoppedAtErrorLimit: imported.completion
        default: held != nil ? .held : failures.isEmpty && hashed.report.isComplete ? .success : .someFailed
        }
        if !failures.isEmpty { record.message = "\(failures.count) files failed" }
        if let held { record.message = held }
        if interrupted { record.message = "interrupted by a signal; the next run resumes" + (record.message.map { " (\($0))" } ?? "") }
        let refused = options.destination.credentialsRefused
        if let refused {
            record.outcome = .failed
            record.message = refused + "; nothing was lost, the next run resumes"
        }
        narrator.phaseEnded(.finalizing)
        narrator.runEnded(record.outcome, message: record.message ?? "some files could not be read",
                          needsAuth: refused != nil)
        record.endedAt = now()
        record.summary = narration.summaryJSON(review: review)
        var failureRecords = failures.map {
            RunFailureRecord(runID: record.id, relativePath: $0.relativePath, phase: $0.phase, reason: $0.reason.description,
                             category: $0.reason.category)
        }
        failureRecords += hashed.report.issues.map {
            RunFailureRecord(runID: record.id, relativePath: $0.relativePath, phase: .scanning, reason: $0.reason,
                             category: $0.category)
        }
        try await catalog.finishRun(record, failures: failureRecords)
        narration.close()
        var outcomes = imported.outcomes
        if options.keepsOutcomes { outcomes += FileOutcomeEntry.outcomes(scan: hashed.report) }
        var summary = ImportSummary(
            runID: record.id, sourceRoot: context.sourceRoot, counts: counts, failures: failures,
            symlinksSkipped: hashed.report.symlinksSkipped, otherFiles: hashed.report.otherFiles,
            junkSkipped: hashed.report.junkSkipped, scanIssues: hashed.report.issues,
            temporaryFilesRemoved: context.temporaryFilesRemoved, elapsedSeconds: (ContinuousClock.now - context.clockStart).seconds,
            outcome: record.outcome,
            outcomes: outcomes, unfinished: imported.outcomeCounts[.unfinished] ?? 0,
            keptWithoutPreview: keptWithoutPreview, credentialsRefused: refused)
        for hold in imported.heldBack.values { summary.heldBack[hold.label, default: 0] += 1 }
        if !hashed.report.settlingArchives.isEmpty {
            summary.heldBack["archives still being written", default: 0] += hashed.report.settlingArchives.count
        }
        // With derivatives on, an item ends a run owing them only when the workers were left to make them.
        summary.derivativesLeftToWorkers = options.pipeline.derivativesEnabled && imported.archived > 0
        return summary
    }

    /// Records a run that stopped on an error, so `cairn status` can say why.
    package func fail(_ context: Context, _ error: any Error) async {
        var record = context.record
        if case WorkerError.interrupted(let message) = error { narrator.warning(message) }
        record.outcome = if case WorkerError.interrupted = error { .interrupted } else { .failed }
        record.message = "\(error)"
        narrator.runEnded(record.outcome, message: record.message,
                          needsAuth: options.destination.credentialsRefused != nil)
        record.endedAt = now()
        record.summary = narration.summaryJSON()
        try? await catalog.finishRun(record, failures: [])
        narration.close()
    }
}

extension FileOutcomeEntry {
    /// Symbolic links skipped and paths the walk could not read.
    static func outcomes(scan report: ScanReport) -> [FileOutcomeEntry] {
        report.symlinksSkipped.map {
            FileOutcomeEntry(path: $0, outcome: .skipped(reason: "symbolic link (never followed)"))
        } + report.settlingArchives.map {
            FileOutcomeEntry(path: $0.relativePath, outcome: .skipped(reason: $0.reason))
        } + report.issues.map {
            FileOutcomeEntry(path: $0.relativePath, outcome: .failed(phase: .scanning,
                                                                  reason: FailureReason($0.reason, category: $0.category)))
        }
    }
}
