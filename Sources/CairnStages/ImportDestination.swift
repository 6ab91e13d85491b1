import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMedia
import CairnPipeline
import CairnReconcile
import CairnStore
import CairnTrash
import Foundation

/// Where an import brings new content: the library's own originals store, or an Immich server. The walk, the
/// hashing, the lanes, the item states and the narration are the same for every destination; a destination
/// supplies the stages that bring the run's planned items in, and says whether it makes its own derivatives.
package protocol ImportDestination: Sendable {
    /// The lanes' work for the whole run.
    func stages(for run: DestinationRun) -> any PipelineStages
    /// Called with each page of planned items before the lanes get it: a destination may first ask what it
    /// already holds of them.
    func prepare(_ records: [ItemRecord], run: DestinationRun) async throws
    /// Whether the destination makes its own thumbnails, previews and clips: items then end after the transfer.
    var makesOwnDerivatives: Bool { get }
    /// Items of at most this many bytes may be held whole in memory while the transfer brings them in (a store's put,
    /// an archive's entry sent to Immich): a run's memory budget counts each at twice its size, the bytes read and
    /// the request's copy of them (`LaneSettings.holdsItemsUpTo`). 0: none is.
    var holdsItemsInMemoryUpTo: Int64 { get }
    /// Live Photo pairs not linked yet (a still and its movie): a destination that shows them as one links them.
    /// Returns those it linked; one that failed waits for the next run, and stops no other.
    func link(_ pairs: [AssetPairRecord], catalog: any AssetCatalog) async throws -> [AssetPairRecord]
    /// The stills whose synthesis phase waited for Live Photo pairing this run, taken; the run pairs, tells
    /// `pairingSettled`, and sends them through the lanes again. None where the destination makes no clips.
    func stillsAwaitingPairing() -> [ImportItem]
    /// Pairing ran: `paired` are the waiting stills that have their movie (they need no clip; the rest get one).
    func pairingSettled(paired: Set<Checksum>)
    /// After the lanes: whatever the destination does with the run's assets as a whole (Immich's albums). Returns
    /// lines for the narration.
    func finishImport(runID: String, sourceRoot: String, catalog: any AssetCatalog) async throws -> [String]
    /// Why the destination refused the run's credentials, when it did (the run stops; exit `needsAuth`).
    var credentialsRefused: String? { get }
    /// Content the destination held in its trash and brought back this run, because the source still holds it.
    var restoredFromTrash: Int { get }
    /// Moves the plan's deletions to the destination's trash (journaled first, restorable by run).
    func trash(_ candidates: [DeleteCandidate], runID: String, sourcePaths: [Checksum: String], library: Library,
               catalog: any DeletionCatalog, now: Date) async throws -> DeletionRun.Summary
    /// Where a run's trash went and how to bring it back, for the run's narration.
    func trashNote(count: Int, runID: String) -> String
    /// What the destination no longer shows of the content the catalog counts as there: a `full` check looks at
    /// every asset, a `trash` check only at what the destination's own trash took since `since`. Content cairn
    /// trashed has no asset row, so it is never drift.
    func findDrift(_ kind: DestinationCheckKind, since: Date?, library: Library, catalog: any AssetCatalog,
                   now: Date) async throws -> [DriftRecord]
    /// Brings `trashed` back from the destination's own trash, each journaled first; returns what came back.
    func restoreDrift(_ trashed: [Checksum], runID: String, library: Library, catalog: any AssetCatalog,
                      now: Date) async throws -> [Checksum]
    /// Whether queue workers write into the library's `tmp/` while the run holds its lock: the run's sweep of
    /// leftovers then spares what may still be in use (`Library.removeLeftoverTemporaryFiles(untouchedSince:)`).
    var sharesTemporaryFolder: Bool { get }
    /// Tags the run's new assets at the destination too, when it has tags of its own (the catalog holds them
    /// already). Returns lines for the narration.
    func tag(_ assets: [AssetRecord], with tags: [String]) async throws -> [String]
    /// Makes the stacks at the destination too (Immich's `POST /stacks`); returns the primaries of those it made
    /// (the others wait for the next run) and lines for the narration. The library's stacks are its catalog's.
    func stack(_ stacks: [AssetStack], catalog: any AssetCatalog) async throws -> (made: [Checksum], notes: [String])
}

extension ImportDestination {
    package var sharesTemporaryFolder: Bool { false }
    /// The library's tags are its catalog's.
    package func tag(_ assets: [AssetRecord], with tags: [String]) async throws -> [String] { [] }
    package func stack(_ stacks: [AssetStack], catalog: any AssetCatalog) async throws -> (made: [Checksum], notes: [String]) {
        (stacks.map(\.primary), [])
    }
}

/// What the stages share with the run: the catalog's group commit, the run's id, its media settings and the
/// narration's callbacks.
package struct DestinationRun: Sendable {
    package var library: Library
    package var groupCommit: GroupCommit
    package var runID: String?
    package var media: MediaEngine
    package var clipOptions: ClipOptions
    /// Whether stills get clips this run (`--clips`).
    package var clipsEnabled = true
    package var onCopied: @Sendable (Int64) -> Void
    package var onDamaged: @Sendable (String, String) -> Void
    package var onKeptWithoutPreview: @Sendable (String, FailureReason) -> Void
    package var work: WorkTracker?
    /// The lanes each item takes this run.
    package var route: @Sendable (ImportItem) -> ItemRoute = { _ in .withClip }
}

/// The library folder itself: originals copied into its content-addressed store, derivatives made by cairn.
package struct LibraryDestination: ImportDestination {
    /// This run's stills whose clip waits for pairing.
    private let deferredClips = DeferredClips()
    /// Where the library's files live when not in its folder (`--store`): the stages put what they make there.
    package var store: (any ObjectStore)?
    /// The library folder whose leftovers a store's run sweeps (set with the store).
    package var folderRoot: String?
    /// The time by which the store's unfinished writes count as abandoned.
    package var now: @Sendable () -> Date = { Date() }
    /// With a shared work queue, the run's stages as the queue wraps them (its derivative phases queued as jobs).
    package var queued: (@Sendable (_ local: any PipelineStages, DestinationRun) -> any PipelineStages)?

    package init(store: (any ObjectStore)? = nil, folderRoot: String? = nil) {
        self.store = store
        self.folderRoot = folderRoot
    }

    package var makesOwnDerivatives: Bool { false }

    /// This process's queue worker starts before the run sweeps `tmp/`, and other hosts' workers write there too.
    package var sharesTemporaryFolder: Bool { queued != nil }

    /// A small file goes to a store from memory (`StoreStages.inMemoryLimit`); into the folder, it is copied.
    package var holdsItemsInMemoryUpTo: Int64 { store == nil ? 0 : StoreStages.inMemoryLimit }

    /// The catalog's pairs are the library's links: nothing more to do.
    package func link(_ pairs: [AssetPairRecord], catalog: any AssetCatalog) async throws -> [AssetPairRecord] { pairs }

    package var credentialsRefused: String? { nil }

    package func stillsAwaitingPairing() -> [ImportItem] { deferredClips.takeWaiting() }

    package func pairingSettled(paired: Set<Checksum>) { deferredClips.pairingSettled(paired: paired) }

    /// The library's assets need nothing more once the lanes and pairing are done. With a store, what the folder
    /// still holds of the store's files (an item that ended before its last lane: failed, or kept without preview)
    /// goes, each only once the store is seen to hold it whole; and the store's writes left unfinished over a week
    /// ago (a kill whose uploads no run resumed) are cleared, or said to be left when the store refuses.
    package func finishImport(runID: String, sourceRoot: String, catalog: any AssetCatalog) async throws -> [String] {
        guard let store, let root = folderRoot else { return [] }
        try await StoreFiles.sweep(FolderStore(root: root), into: store)
        let cleared: Int
        do { cleared = try await store.clearAbandonedWrites(now: now()) } catch {
            return ["left the unfinished uploads in \(store.description) begun over a week ago: \(error)"]
        }
        guard cleared > 0 else { return [] }
        return ["cleared \(cleared) unfinished \(cleared == 1 ? "upload" : "uploads") in \(store.description) begun over a "
                + "week ago and never resumed"]
    }

    /// The library's trash is cairn's own: content found there is restored by `cairn restore`, not by an import.
    package var restoredFromTrash: Int { 0 }

    package func trash(_ candidates: [DeleteCandidate], runID: String, sourcePaths: [Checksum: String],
                       library: Library, catalog: any DeletionCatalog, now: Date) async throws -> DeletionRun.Summary {
        if let store {
            return try await StoreTrash(libraryRoot: library.layout.root, catalog: catalog, store: store)
                .trash(candidates, runID: runID, sourcePaths: sourcePaths, now: now)
        }
        return try await DeletionRun(library: library, catalog: catalog).trash(candidates, runID: runID, sourcePaths: sourcePaths,
                                                                        now: now)
    }

    package func trashNote(count: Int, runID: String) -> String {
        guard let store else { return "moved \(count) assets to trash/\(runID) (restore with `cairn restore --run-id \(runID)`)" }
        return "trashed \(count) assets in run \(runID); their files stay in \(store.description) until `cairn trash "
            + "purge` (restore with `cairn restore --run-id \(runID)`)"
    }

    /// An original gone from the library folder (removed by hand, a disk restored from an old backup) is missing;
    /// the library has no trash but cairn's own, so a `trash` check finds nothing.
    package func findDrift(_ kind: DestinationCheckKind, since: Date?, library: Library, catalog: any AssetCatalog,
                           now: Date) async throws -> [DriftRecord] {
        // A store's objects are compared with the catalog by `cairn check`, a listing, not a request per asset.
        guard kind == .full, store == nil else { return [] }
        let layout = library.layout
        let assets = try await catalog.allAssets()
        return try await BlockingPool.run {
            assets.filter { !FileSystem.exists(layout.absolute($0.originalPath)) }
                .map { DriftRecord(checksum: $0.checksum, state: .missing, seenAt: now) }
        }
    }

    package func restoreDrift(_ trashed: [Checksum], runID: String, library: Library, catalog: any AssetCatalog,
                              now: Date) async throws -> [Checksum] { [] }

    /// The library holds what its catalog says: nothing to ask before a page.
    package func prepare(_ records: [ItemRecord], run: DestinationRun) async throws {}

    package func stages(for run: DestinationRun) -> any PipelineStages {
        var stages = LibraryStages(layout: run.library.layout, media: run.media, clipOptions: run.clipOptions,
                                   runID: run.runID)
        stages.syncsEachFile = false  // the group commit syncs each batch
        stages.onCopied = run.onCopied
        stages.onDamaged = run.onDamaged
        stages.onKeptWithoutPreview = run.onKeptWithoutPreview
        stages.work = run.work
        stages.deferredClips = deferredClips
        let local: any PipelineStages = store.map { StoreStages(base: stages, store: $0, route: run.route) } ?? stages
        return queued?(local, run) ?? local
    }
}
