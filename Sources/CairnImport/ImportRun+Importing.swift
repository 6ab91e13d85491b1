import CairnCatalog
import CairnCore
import CairnLibrary
import CairnPipeline
import CairnStages
import Foundation

/// The importing phase: the lanes, fed a page of items at a time.
extension ImportRun {
    /// Brings new content (and whatever earlier runs left unfinished) through the transfer, metadata, thumbnail
    /// and synthesis lanes (`PipelineImport`), a page at a time: each page's items are planned as placeholders
    /// first and every transition is persisted, so a killed run resumes where it stood; content not yet planned
    /// is found again by the next run's scan, its checksum cached. `options.cancellation` stops it (a signal).
    package func importContent(_ plan: ContentPlan, hashed: Hashed, context: Context) async throws -> Imported {
        narrator.phaseStarted(.importing)
        let files = hashed.files
        let archiveOnly = !options.pipeline.derivativesEnabled
        if options.retryFailed {
            let retried = try await catalog.retryCrashFailedImportItems(sourceID: context.sourceID)
            if retried > 0 {
                narrator.note("--retry-failed: \(retried) file\(retried == 1 ? "" : "s") that crashed the worker before "
                              + "go through the lanes again")
            }
        }
        let earlier = try await files.unfinishedImportItemCount(owingTransfer: archiveOnly)
        let total = earlier + plan.newContent
        narrator.expectTotal(.importing, items: total)

        var configuration = options.pipeline
        configuration.gatherMarks(for: catalog.inFlightMarkLinger)
        var pipeline = PipelineImport(library: library, catalog: catalog, configuration: configuration,
                                      sourceID: context.sourceID)
        pipeline.runID = context.record.id
        pipeline.destination = options.destination
        let narration = PipelineNarration(narrator: narrator, configuration: configuration)
        pipeline.onCopied = narration.copied
        pipeline.work = work
        let narrator = self.narrator
        let kept = keptWithoutPreview
        pipeline.onKeptWithoutPreview = { path, reason in
            if kept.append(ImportFailure(relativePath: path, phase: .thumbnail, reason: reason, retryable: false)) {
                narrator.keptWithoutPreview(file: path, reason: reason)
            }
        }
        pipeline.onDamaged = { original, quarantined in
            narrator.warning("\(original) was damaged (its bytes no longer match its SHA1): kept at \(quarantined), copied anew from the source")
        }

        let held = await heldContent(hashed, context: context)
        let heldSoFar = Locked(0)
        let pages = ImportPages(files: files, catalog: catalog, sourceID: context.sourceID, sourceRoot: context.sourceRoot,
                                archiveOnly: archiveOnly, size: pageSizes.import, held: held) { [narrator] count in
            // What is held back is no work of the lanes: the progress counts without it.
            let all = heldSoFar.withLock { $0 += count; return $0 }
            narrator.expectTotal(.importing, items: total - all)
        }
        var result = try await pipeline.run(pages: pages, onEvent: narration.handle, cancellation: options.cancellation)
        try await files.recordItems(result.report.entries)
        // Stills whose clip waited for Live Photo pairing: paired now, then through their synthesis phase again.
        // Until then they are not ready, so a run stopped before this pass (or killed in it) resumes them.
        let waiting = options.destination.stillsAwaitingPairing()
        var pairedThisRun = false
        if !waiting.isEmpty { await TestHooks.pauseBeforePairing(until: options.cancellation) }
        if !waiting.isEmpty, options.cancellation.isCancelled || result.completion == .stoppedAtErrorLimit {
            // Not ready: each resumes at its synthesis phase next run.
            try await files.recordItems(waiting.map {
                FileOutcomeEntry(path: $0.relativePath, checksum: $0.checksum, outcome: .unfinished(resumeAt: .synthesis))
            })
        } else if !waiting.isEmpty {
            try await pair()
            pairedThisRun = true
            // One read of the pairs, not one per still: most of a phone's photos may be Live Photos.
            let paired = Set(try await catalog.allPairs().map(\.still)).intersection(waiting.map(\.checksum))
            options.destination.pairingSettled(paired: paired)
            let again = WaitingStillsFeed(stills: waiting, paired: paired, files: files, catalog: catalog,
                                          sourceID: context.sourceID, size: pageSizes.import)
            let second = try await pipeline.run(pages: again, onEvent: narration.handle, cancellation: options.cancellation)
            try await files.recordItems(second.report.entries)
            if second.completion != .success { result.completion = second.completion }
            let made = again.clipsMade + WaitingStillsFeed.clips(in: second.report.entries, paired: paired)
            if made > 0 {
                narrator.note("made \(made) clip\(made == 1 ? "" : "s") after pairing for stills whose same-named movie "
                              + "was not their Live Photo")
            }
        }
        let heldBack = await pages.heldBack
        for (label, held) in Dictionary(grouping: heldBack, by: { $0.value.label }).sorted(by: { $0.key < $1.key }) {
            let why = label == "in Google Photos' trash"
                ? "that sat in Google Photos' trash (their Takeout JSON says so; --include-trashed imports them)"
                : "left out by this run's filters (\(label))"
            let paths = held.map { $0.key }.sorted()
            narrator.note("skipped \(paths.count) file\(paths.count == 1 ? "" : "s") \(why): "
                          + paths.prefix(3).joined(separator: ", ") + (paths.count > 3 ? ", ..." : ""))
        }
        var imported = Imported(bytesCopied: 0, failures: [])
        imported.completion = result.completion
        if options.cancellation.isCancelled { imported.completion = .interrupted }
        imported.bytesCopied = narration.bytesCopied
        let restored = options.destination.restoredFromTrash
        if restored > 0 {
            narrator.note("restored \(restored) file\(restored == 1 ? "" : "s") from Immich's trash: the source still holds them")
        }
        try await reportCrashFailures(of: context, files: files, into: &imported)

        // What became of every file, read from where the catalog's items stand.
        if options.keepsOutcomes {
            imported.outcomes = try await files.outcomes()
            for entry in imported.outcomes { imported.outcomeCounts[entry.outcome.kind, default: 0] += 1 }
        } else {
            // Counted in SQL: a run without `--report` reads no line per file.
            imported.outcomeCounts = try await files.outcomeCounts()
        }
        // Held back on purpose: skipped with their reason, where the run tables see new content never reached.
        imported.heldBack = heldBack
        if !heldBack.isEmpty {
            imported.outcomes = imported.outcomes.map { entry in
                guard entry.outcome.kind == .unfinished, let hold = heldBack[entry.path] else { return entry }
                return FileOutcomeEntry(path: entry.path, checksum: entry.checksum, outcome: .skipped(reason: hold.reason))
            }
            let moved = min(heldBack.count, imported.outcomeCounts[.unfinished] ?? 0)
            imported.outcomeCounts[.unfinished, default: 0] -= moved
            imported.outcomeCounts[.skipped, default: 0] += moved
        }
        imported.ready = imported.outcomeCounts[.imported] ?? 0
        imported.archived = imported.outcomeCounts[.archived] ?? 0
        imported.failures = try await files.failedItems()
        let unfinished = imported.outcomeCounts[.unfinished] ?? 0

        // Pairing looks at every unpaired asset: only worth it when this run brought something in.
        if imported.completion != .interrupted, !pairedThisRun {
            if imported.ready > 0 { try await pair() } else { try await linkPairs() }
        }
        if imported.completion != .interrupted, hashed.report.sidecarCount > 0 {
            let sidecars = await SidecarLinker(library: library, catalog: catalog, sourceID: context.sourceID, now: now(),
                                               store: (options.destination as? LibraryDestination)?.store)
                .link(sidecarsOf: files, sourceRoot: context.sourceRoot)
            if sidecars.linked > 0 { narrator.note("\(sidecars.linked) sidecar\(sidecars.linked == 1 ? "" : "s") stored with their media") }
            if !sidecars.albumsChanged.isEmpty {
                let count = sidecars.albumsChanged.count
                narrator.note("\(count) album\(count == 1 ? "" : "s") from Google Takeout kept or grown: "
                              + sidecars.albumsChanged.sorted().prefix(5).joined(separator: ", ") + (count > 5 ? ", ..." : ""))
            }
            for failure in sidecars.failures {
                narrator.warning("sidecar \(failure.relativePath) not stored (next run tries again): \(failure.reason)")
            }
        }
        // After the sidecars, whose capture times stacking reads too.
        if imported.completion != .interrupted, options.stacks { try await stack(findingNew: imported.ready > 0) }
        // After the sidecars: what they taught the catalog reaches the destination too.
        if imported.completion != .interrupted {
            for line in try await options.destination.finishImport(runID: context.record.id, sourceRoot: context.sourceRoot,
                                                                   catalog: catalog) {
                narrator.note(line)
            }
        }
        try await tagNewAssets(of: context)
        switch imported.completion {
        case .interrupted: narrator.warning("interrupted: \(unfinished) items resume next run")
        case .stoppedAtErrorLimit:
            narrator.warning("stopped after \(options.pipeline.maxErrors ?? 0) failures (--max-errors); "
                             + "\(unfinished) items resume next run")
        case .success, .someFailed, .held, .failed, .running: break
        }
        if imported.archived > 0 {
            let originals = "\(imported.archived) original\(imported.archived == 1 ? "" : "s")"
            if options.pipeline.derivativesEnabled {
                narrator.note("\(originals) in the library, their thumbnails and clips left to the queue's workers "
                              + "(--no-wait): the next import or sync records them")
            } else {
                narrator.note("\(originals) archived without derivatives (--derivatives off): a run without it makes "
                              + "their thumbnails, previews and clips")
            }
        }
        narrator.phaseEnded(.importing)
        return imported
    }
}

extension ImportRun {
    /// Pairs the library's Live Photos (a still and its movie), then has the destination link them.
    func pair() async throws {
        let pairs = try await LivePhotoPairing.pair(catalog: catalog, now: now())
        if !pairs.isEmpty {
            narrator.note("paired \(pairs.count) Live Photo\(pairs.count == 1 ? "" : "s") (a still and its movie, one unit)")
        }
        try await linkPairs()
    }

    /// Every pair the destination has not linked yet, this run's and those whose link failed before, linked and
    /// recorded; one that fails again waits for the next run.
    func linkPairs() async throws {
        let waiting = try await catalog.pairsAwaitingLink()
        guard !waiting.isEmpty else { return }
        let linked = try await options.destination.link(waiting, catalog: catalog)
        try await catalog.markPairsLinked(linked.map(\.still), at: now())
        if linked.count < waiting.count {
            let left = waiting.count - linked.count
            narrator.warning("\(left) Live Photo link\(left == 1 ? "" : "s") not made at the destination; the next run "
                             + "tries again")
        }
    }

    /// Finds the stacks among the library's stills (only when the run brought something in: it reads every still
    /// in no stack), then has the destination make those it has not made yet.
    func stack(findingNew: Bool) async throws {
        if findingNew {
            let stacks = try await AssetStacking.stack(catalog: catalog, now: now())
            if !stacks.isEmpty {
                let photos = stacks.reduce(0) { $0 + $1.members.count }
                narrator.note("stacked \(photos) photos in \(stacks.count) stack\(stacks.count == 1 ? "" : "s") (a RAW or HEIC "
                              + "with its JPEG, a burst's frames; --stacks off keeps them apart)")
            }
        }
        let waiting = try await catalog.stacksAwaitingLink()
        guard !waiting.isEmpty else { return }
        let (made, notes) = try await options.destination.stack(waiting, catalog: catalog)
        try await catalog.markStacksLinked(made, at: now())
        for note in notes { narrator.note(note) }
    }

    /// Every file of the source that the crash-loop guard failed for good is a failure of this run too, until
    /// `--retry-failed` (or new content) takes it up again: listed with its reason in the summary, the run record
    /// (`cairn status`), `--report` and the events, counted once in each (noted as items of this run, read back
    /// with the rest).
    func reportCrashFailures(of context: Context, files: any RunTables, into imported: inout Imported) async throws {
        let failed = try await files.crashFailedImportItems()
        guard !failed.isEmpty else { return }
        for record in failed {
            guard let failure = record.state.failure else { continue }
            narrator.failed(file: record.item.relativePath, reason: failure.reason, phase: .importing,
                            bytes: record.item.byteCount)
        }
        try await files.recordItems(failed.map { FileOutcomeEntry($0, leftUnfinished: false) })
        if imported.completion == .success { imported.completion = .someFailed }
    }
}

/// The lanes' page source for an import: plans each page as the scheduler asks for it (about a page before the
/// last runs out), and notes the items that ended in the run tables, so neither the scheduler nor the run holds a
/// line per item.
extension ImportPages: PlannedPageSource {
    nonisolated var refillBelow: Int { size }

    func nextPage(ended: [FileOutcomeEntry]) async throws -> [ItemRecord]? {
        try await files.recordItems(ended)
        MemoryTuning.releaseFreePages()
        return try await next()
    }
}

/// The second pass's pages: the stills whose synthesis phase waited for pairing, a page at a time, read back as
/// they stand (a plan of content the catalog holds keeps its state); counts the clips the pass made.
final class WaitingStillsFeed: PlannedPageSource {
    let refillBelow: Int
    private let files: any RunTables
    private let catalog: any ItemCatalog
    private let sourceID: Int64
    private let paired: Set<Checksum>
    private let state: Locked<(rest: ArraySlice<ImportItem>, made: Int)>

    init(stills: [ImportItem], paired: Set<Checksum>, files: any RunTables, catalog: any ItemCatalog, sourceID: Int64,
         size: Int) {
        state = Locked((stills[...], 0))
        refillBelow = size
        self.paired = paired
        self.files = files
        self.catalog = catalog
        self.sourceID = sourceID
    }

    /// Clips made so far: unpaired stills that ended imported.
    var clipsMade: Int { state.withLock { $0.made } }

    static func clips(in entries: [FileOutcomeEntry], paired: Set<Checksum>) -> Int {
        entries.count { $0.outcome == .imported && !($0.checksum.map(paired.contains) ?? false) }
    }

    func nextPage(ended: [FileOutcomeEntry]) async throws -> [ItemRecord]? {
        try await files.recordItems(ended)
        let made = Self.clips(in: ended, paired: paired)
        let page = state.withLock { state -> ArraySlice<ImportItem> in
            state.made += made
            defer { state.rest = state.rest.dropFirst(refillBelow) }
            return state.rest.prefix(refillBelow)
        }
        guard !page.isEmpty else { return nil }
        return try await catalog.planImportItems(Array(page), sourceID: sourceID)
    }
}

/// The importing phase's pages: first what earlier runs left unfinished, then this run's new content, each page
/// planned in the catalog as it is taken.
actor ImportPages {
    nonisolated let files: any RunTables
    let catalog: any ItemCatalog
    let sourceID: Int64
    let sourceRoot: String
    let archiveOnly: Bool
    let size: Int
    private var lastEarlier = ItemID(0)
    private var earlierDone = false
    private var lastFirstFile: Int64 = 0
    /// What the run holds back of its new content (`ImportFilter`); nil holds nothing back.
    let held: HeldContent?
    /// What was held back so far, by source path.
    private(set) var heldBack: [String: Hold] = [:]

    /// Told how many files a page held back.
    let onHeld: @Sendable (Int) -> Void

    init(files: any RunTables, catalog: any ItemCatalog, sourceID: Int64, sourceRoot: String, archiveOnly: Bool,
         size: Int, held: HeldContent? = nil, onHeld: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.held = held
        self.onHeld = onHeld
        self.size = size
        self.files = files
        self.catalog = catalog
        self.sourceID = sourceID
        self.sourceRoot = sourceRoot
        self.archiveOnly = archiveOnly
    }

    /// The next page of planned records, or nil at the end. A page of new content whose items all stand where this
    /// run leaves them (an archive-only run, items owing only derivatives) is skipped, not returned empty.
    func next() async throws -> [ItemRecord]? {
        while !earlierDone {
            let records = try await files.unfinishedImportItems(after: lastEarlier, limit: size, owingTransfer: archiveOnly)
            guard let last = records.last else {
                earlierDone = true
                break
            }
            lastEarlier = last.id
            return records
        }
        while true {
            let content = try await files.newContent(after: lastFirstFile, limit: size)
            guard let last = content.last else { return nil }
            lastFirstFile = last.id
            // Held back: skipped with its reason, never planned, and still at the source (never "gone").
            var kept = content
            if let held {
                let holds = await held.holds(content)
                kept = zip(content, holds).compactMap { $1 == nil ? $0 : nil }
                let skipped = zip(content, holds).compactMap { file, hold in
                    hold.map {
                        FileOutcomeEntry(path: file.record.relativePath, checksum: file.record.checksum,
                                         outcome: .skipped(reason: $0.reason))
                    }
                }
                for (file, hold) in zip(content, holds) { if let hold { heldBack[file.record.relativePath] = hold } }
                try await files.recordItems(skipped)
                if !skipped.isEmpty { onHeld(skipped.count) }
            }
            let items = kept.compactMap { file in
                file.record.checksum.map {
                    ImportItem(relativePath: file.record.relativePath, sourceRoot: sourceRoot, kind: file.record.kind,
                               byteCount: file.record.fingerprint.size, checksum: $0)
                }
            }
            let records = try await CatalogItemStateStore.planNew(items, in: catalog, sourceID: sourceID,
                                                                  owingTransfer: archiveOnly)
            if !records.isEmpty { return records }
        }
    }
}
