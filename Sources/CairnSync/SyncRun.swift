import CairnArchive
import CairnCatalog
import CairnCore
import CairnImport
import CairnLibrary
import CairnNarration
import CairnReconcile
import CairnScanner
import CairnTrash
import Foundation

/// What a sync was asked to do.
public struct SyncOptions: Sendable {
    public var importOptions: ImportOptions
    public var settings: ReconcileSettings
    /// Trash past-quarantine candidates; without it they are only reported.
    public var applyDeletions = false
    /// The person says the files that vanished were removed on purpose: stand the mass-vanish rail down.
    public var acceptVanished = false
    /// Compute and report the plan; change nothing at all (no catalog write, no run log, no lock file).
    public var dryRun = false
    /// When the destination is checked for drift, and what is done with it.
    public var destinationCheck = DestinationCheckPolicy()

    public init(importOptions: ImportOptions, settings: ReconcileSettings) {
        self.importOptions = importOptions
        self.settings = settings
    }
}

/// What a sync (or dry run) found and did.
public struct SyncSummary: Sendable {
    public var runID: String
    public var sourceRoot: String
    public var plan: ReconciliationPlan
    /// Nil for a dry run, or when the source could not be walked.
    public var imported: ImportSummary?
    public var trashed: DeletionRun.Summary?
    /// What the check of the destination found (nil for a dry run, or when the check could not be made).
    public var drift: DestinationDrift?
    public var dryRun: Bool

    /// The most serious of: interrupted, a rail held deletions, some files failed, success.
    public var exitStatus: ExitStatus {
        let statuses = [plan.exitStatus, imported?.exitStatus ?? .success, trashed?.exitStatus ?? .success]
        for worst in [ExitStatus.needsAuth, .interrupted, .deletionsHeldBySafetyRail, .someFilesFailed]
        where statuses.contains(worst) {
            return worst
        }
        return .success
    }
}

/// One `cairn sync` (or `cairn dry-run`): scan, hash, reconcile, import, and trash what the plan allows.
///
/// The dry run computes the same plan from the same inputs and stops before the first write.
public struct SyncRun: Sendable {
    public let library: Library
    public let options: SyncOptions
    public let narration: RunNarration
    public var now: @Sendable () -> Date = { Date() }
    /// Where the run keeps its records: the library's SQLite catalog or PostgreSQL's.
    package let catalog: any ImportCatalog

    public init(library: Library, catalog: any ImportCatalog, options: SyncOptions,
                output: any NarrationHandler = DiscardingNarrationHandler()) {
        self.library = library
        self.catalog = catalog
        self.options = options
        narration = RunNarration(layout: library.layout, output: output, keepsLog: !options.dryRun)
    }

    /// The run; cancelling the calling task stops it as SIGINT does (`PipelineCancellation.stoppingOnCancel`).
    public func run() async throws -> SyncSummary {
        try await options.importOptions.cancellation.stoppingOnCancel {
            var importRun = ImportRun(library: library, catalog: catalog, options: options.importOptions,
                                      narration: narration)
            importRun.now = now
            // A dry run only shares the lock (a writer would change what it reads); sharing writes nothing. Abandoned
            // (timed-out) phases finish before the lock goes: none may write after it.
            return try await library.whileLocked(shared: options.dryRun) { [importRun] in
                try await importRun.work.settling { try await runLocked(importRun) }
            }
        }
    }

    private func runLocked(_ importRun: ImportRun) async throws -> SyncSummary {
        let narrator = narration.narrator
        let catalog = importRun.catalog
        let given = Self.absolute(options.importOptions.source)
        let resolved = FileSystem.resolved(given)
        let knownID = try await catalog.existingSourceID(forRoot: resolved ?? given)
        let probe = ReconcileInputs.probe(sourceRoot: resolved ?? given)
        guard probe.root == .directory, let sourceRoot = resolved else {
            // The classic mass-deletion bug is an unmounted disk: a missing root is a rail, not an empty source.
            guard let knownID else { throw WorkerError.sourceUnusable(ScanError.describeMissing(given, probe.root)) }
            return try await holdForMissingSource(sourceID: knownID, root: given, probe: probe, catalog: catalog)
        }

        var context: ImportRun.Context
        if options.dryRun {
            narrator.runStarted(command: "dry-run")
            let record = RunRecord(id: narration.runID, command: "dry-run", sourceID: knownID, startedAt: now())
            context = ImportRun.Context(record: record, sourceRoot: sourceRoot, sourceID: knownID ?? -1,
                                        temporaryFilesRemoved: 0, clockStart: .now)
        } else {
            context = try await importRun.begin(command: "sync")
        }
        do {
            let drift = options.dryRun ? nil : try await checkDestination(catalog: catalog)
            return try await catalog.withRunTables(sourceID: context.sourceID) { files in
                let prepared = try await importRun.prepare(context, into: files)
                let hashed = try await importRun.hash(prepared, context: context, keepsHashes: !options.dryRun)

                narrator.phaseStarted(.reconciling)
                let contentPlan = try await importRun.classify(hashed)
                // A file that could not be hashed keeps its last checksum (the run tables carry it), and the scan counts
                // as unhealthy, so an unreadable file is never mistaken for a deleted one.
                // Files a stopping run left unhashed count the same way: their content is unknown this run.
                // An archive that vanished is held like an unmounted disk: its entries are not taken for deleted.
                let heldArchives = Self.heldArchives(prepared.vanished, root: sourceRoot,
                                                     reading: options.importOptions.archives == .read,
                                                     acceptsGone: options.acceptVanished)
                let unreadable = hashed.failures.map { "\($0.relativePath): \($0.reason)" }
                    + hashed.report.issues.map(\.description)
                    + hashed.report.settlingArchives.map(\.description)
                    + heldArchives
                    + (hashed.notHashed > 0 ? ["\(hashed.notHashed) files not hashed: the run was stopping"] : [])
                let scan = ReconcileInputs.probe(sourceRoot: sourceRoot, unreadable: unreadable)
                let reconciliation = try await CatalogReconciliation.reconcile(
                    runFiles: files, catalog: catalog, scan: scan, settings: options.settings, now: now(),
                    runID: narration.runID, acceptMassVanish: options.acceptVanished)
                let plan = reconciliation.plan
                narrate(reconciliation)
                narrator.phaseEnded(.reconciling)

                if options.dryRun {
                    narrator.runEnded(.success)
                    narration.close()
                    return SyncSummary(runID: narration.runID, sourceRoot: sourceRoot, plan: plan,
                                       imported: nil, trashed: nil, dryRun: true)
                }

                try await reconciliation.commit(runFiles: files)
                let imported = try await importRun.importContent(contentPlan, hashed: hashed, context: context)
                // An interrupted run trashes nothing: the user asked it to stop, not to finish its deletions.
                let interrupted = imported.completion == .interrupted || options.importOptions.cancellation.isCancelled
                if interrupted, !plan.deleteCandidates.isEmpty {
                    narrator.warning("interrupted: \(plan.deleteCandidates.count) deletions wait for the next sync")
                }
                let trashed = interrupted ? nil : try await trash(plan, runFiles: files, catalog: catalog)
                let review = Self.review(plan)
                let held = plan.exitStatus == .deletionsHeldBySafetyRail
                    ? "deletions held: " + (plan.verdict.holds.first?.reason ?? "a safety rail tripped") : nil
                let summary = try await importRun.finish(context, hashed: hashed, imported: imported, plan: contentPlan,
                                                   review: review, held: held)
                return SyncSummary(runID: narration.runID, sourceRoot: sourceRoot, plan: plan,
                                   imported: summary, trashed: trashed, drift: drift, dryRun: false)
            }
        } catch {
            if options.dryRun {
                narrator.runEnded(.failed, message: "\(error)")
                narration.close()
            } else {
                await importRun.fail(context, error)
            }
            throw error
        }
    }

    /// Checks the destination for drift before the walk (so that content brought back in is walked as new). A check
    /// that fails is a warning: the import goes on, and the next run checks again; a refused key stops the run.
    private func checkDestination(catalog: any ImportCatalog) async throws -> DestinationDrift? {
        let check = DestinationCheck(destination: options.importOptions.destination, policy: options.destinationCheck,
                                     library: library, catalog: catalog, runID: narration.runID, now: now())
        do {
            let drift = try await check.run()
            narration.narrator.destinationChecked(drift)
            return drift
        } catch {
            if options.importOptions.destination.credentialsRefused != nil { throw error }
            narration.narrator.warning("could not check the destination for drift (next run tries again): \(error)")
            return nil
        }
    }

    /// Trashes the plan's delete candidates, when deletions are switched on.
    private func trash(_ plan: ReconciliationPlan, runFiles: any RunTables, catalog: any DeletionCatalog) async throws
        -> DeletionRun.Summary? {
        let narrator = narration.narrator
        guard !plan.deleteCandidates.isEmpty else { return nil }
        guard options.applyDeletions else {
            narrator.note("\(plan.deleteCandidates.count) assets may be trashed; run with --apply-deletions to do it")
            return nil
        }
        let sourcePaths = try await runFiles.lastSourcePaths(of: plan.deleteCandidates.map(\.checksum))
        let destination = options.importOptions.destination
        let summary = try await destination.trash(
            plan.deleteCandidates, runID: narration.runID, sourcePaths: sourcePaths, library: library,
            catalog: catalog, now: now())
        narrator.note(destination.trashNote(count: summary.trashed.count, runID: narration.runID))
        for failure in summary.failures { narrator.failed(file: failure.path, reason: failure.reason, phase: .finalizing) }
        for settled in summary.settled { narrator.warning(settled.description) }
        return summary
    }

    /// The source root is gone or not a folder: reconcile against nothing, which every rail holds, and say why.
    private func holdForMissingSource(sourceID: Int64, root: String, probe: SourceScanFacts, catalog: any ImportCatalog)
        async throws -> SyncSummary {
        let narrator = narration.narrator
        narrator.runStarted(command: options.dryRun ? "dry-run" : "sync")
        narrator.phaseStarted(.reconciling)
        // Reconciled against an empty scan, which every rail holds: the stores only learn that this run happened.
        let plan = try await catalog.withRunTables(sourceID: sourceID) { runFiles in
            let reconciliation = try await CatalogReconciliation.reconcile(
                runFiles: runFiles, catalog: catalog, scan: probe, settings: options.settings, now: now(),
                runID: narration.runID)
            narrate(reconciliation)
            narrator.phaseEnded(.reconciling)
            if !options.dryRun { try await reconciliation.commit(runFiles: runFiles) }
            return reconciliation.plan
        }
        if !options.dryRun {
            var record = RunRecord(id: narration.runID, command: "sync", sourceID: sourceID, startedAt: now())
            let reason = plan.verdict.holds.first?.reason ?? "the source is missing"
            narrator.runEnded(.held, message: reason)
            record.outcome = .held
            record.message = reason
            record.endedAt = now()
            record.summary = narration.summaryJSON(review: Self.review(plan))
            try await catalog.startRun(record)
        } else {
            narrator.runEnded(.success)
        }
        narration.close()
        return SyncSummary(runID: narration.runID, sourceRoot: root, plan: plan, imported: nil, trashed: nil,
                           dryRun: options.dryRun)
    }

    private func narrate(_ reconciliation: CatalogReconciliation) {
        let narrator = narration.narrator
        let plan = reconciliation.plan
        let stamped = reconciliation.signals.stamped.count
        if stamped > 0 { narrator.stamped(confirmedDeleted: stamped) }
        for hold in plan.verdict.holds { narrator.warning("deletions held: \(hold.reason)") }
        for limit in plan.verdict.limits { narrator.note(limit.reason) }
        for warning in plan.verdict.warnings { narrator.warning(warning.reason) }
        narrator.note("plan: " + plan.summary)
    }

    static func review(_ plan: ReconciliationPlan) -> ReviewInfo {
        ReviewInfo(pendingCount: plan.pendingReview.count + plan.heldBySafetyRail.count + plan.deferredByCap.count,
                   quarantinedCount: plan.heldByQuarantine.count,
                   nextQuarantineEligibility: plan.heldByQuarantine.map(\.eligibleAt).min())
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Why entries of archives that vanished from the walk are not taken for deleted, one line per archive: the
    /// archive is gone (held like an unmounted disk, unless `acceptsGone`), or this run does not read archives
    /// (`--archives ignore`; an earlier one did).
    static func heldArchives(_ vanished: [String], root: String, reading: Bool, acceptsGone: Bool) -> [String] {
        var held: [String: String] = [:]
        var seen = Set<String>()
        for path in vanished {
            guard let archive = SourceArchive.container(of: path), seen.insert(archive).inserted else { continue }
            let state = SourceArchive.state(root + "/" + archive)
            if state != .file, !acceptsGone, reading || state == .gone {
                // A split archive's parts never change: an entry of one that vanished went with its part.
                held[archive] = (state == .gone ? "the archive is gone" : "a part of this split archive is gone")
                    + ": its entries are kept, as for an unmounted disk (removed on purpose? sync with --accept-vanished)"
            } else if !reading, state != .gone {
                held[archive] = "an earlier run read this archive; this one leaves archives alone (--archives ignore), "
                    + "so its entries are not taken for deleted"
            }
        }
        return held.keys.sorted().map { "\($0): \(held[$0]!)" }
    }
}

extension ScanError {
    static func describeMissing(_ path: String, _ state: SourceScanFacts.RootState) -> String {
        state == .notADirectory ? ScanError.rootNotDirectory(path).description : ScanError.rootMissing(path).description
    }
}
