import CairnCatalog
import CairnCore
import CairnLibrary
import CairnPipeline
import CairnQueue
import CairnStages
import CairnStore
import Glibc
import Foundation

/// An import's stages when its derivative work is shared: the transfer and the probe run here, as always (they
/// read the source, and the probe's answers steer the rest); the thumbnail and the clip are queued for whichever
/// worker claims them, this process's own included, and the phase waits for the job's result and returns it as
/// the rows the catalog records. A job that fails for good fails the phase with the job's reason (the queue has
/// already retried it); a cancelled wait leaves the job queued for the next run to find.
///
/// Without waiting (`--no-wait`), a phase takes a job's result only if the job has ended already; otherwise the
/// item is left to the workers (`PhaseLeftToOthers`), and a still's clip is queued with its thumbnail so that
/// both are made before the next run asks.
struct QueuedStages: PipelineStages {
    let local: any PipelineStages
    let enqueuer: EnqueueBatcher
    let waiter: JobWaiter
    let library: String
    let layout: LibraryLayout
    /// Where the library's files are when not in its folder: a job's files are looked for there.
    let store: (any ObjectStore)?
    /// The lanes each item takes this run: with a store, the folder's copy of its original goes after the last.
    let route: @Sendable (ImportItem) -> ItemRoute
    let onKeptWithoutPreview: @Sendable (String, FailureReason) -> Void
    /// Whether a phase waits for its job (false: `--no-wait`).
    var waits = true
    /// Whether stills get clips this run (for the clip queued ahead without waiting).
    var clipsEnabled = true

    func transfer(_ item: ImportItem) async throws -> PhaseResult { try await local.transfer(item) }

    func readMetadata(_ item: ImportItem) async throws -> PhaseResult { try await local.readMetadata(item) }

    func makeThumbnail(_ item: ImportItem) async throws -> PhaseResult {
        let result = try await queued(item, kind: .thumbnail)
        evictIfLast(.thumbnail, item)
        return result
    }

    func synthesizeClip(_ item: ImportItem) async throws -> PhaseResult {
        // A still with a movie beside it waits for pairing here: its clip may be that movie.
        if DeferredClips.hasMotionSibling(item) { return try await local.synthesizeClip(item) }
        let result = try await queued(item, kind: .clip)
        evictIfLast(.synthesis, item)
        return result
    }

    /// With a store, the import's copy of an original leaves the folder once the item's last job has ended (the
    /// workers read it from the store).
    private func evictIfLast(_ lane: Lane, _ item: ImportItem) {
        guard store != nil, route(item).lanes.last == lane else { return }
        unlink(layout.absolute(LibraryStages.originalRelativePath(of: item, in: layout)))
    }

    private func queued(_ item: ImportItem, kind: QueuedWork.Kind) async throws -> PhaseResult {
        let job = DerivativeJob(original: LibraryStages.originalRelativePath(of: item, in: layout), kind: item.kind,
                                name: item.relativePath)
        // A job done before (for a run stopped while it waited) stands for the work if every file it made is still
        // in the library; otherwise the work is queued afresh.
        var work = QueuedWork(library: library, checksum: item.checksum.hex, kind: kind, payload: job.payload,
                              reusesDoneJob: true)
        if !waits, kind == .thumbnail, clipsEnabled, item.kind == .photo, !DeferredClips.hasMotionSibling(item) {
            var clip = work
            clip.kind = .clip
            do { _ = try await enqueuer.enqueue(clip) } catch {
                throw StageFailure.transient(FailureReason(operation: "queue", "\(error)"))
            }
        }
        while true {
            let (id, output) = try await outcome(of: work)
            let missing = try await missingFiles(output)
            if missing.isEmpty {
                if let reason = output.keptWithoutPreview { onKeptWithoutPreview(item.relativePath, FailureReason(reason)) }
                return PhaseResult(products: output.rows(for: item.checksum))
            }
            guard work.reusesDoneJob else {
                throw StageFailure.transient(FailureReason(
                    operation: "queue", "job \(id) made \(missing[0]), which is not in the library at \(layout.root)"))
            }
            work.reusesDoneJob = false
        }
    }

    /// Queues `work` and takes the outcome of the job that does it: waits for it, or, when the stages do not wait,
    /// leaves the item to the workers (`PhaseLeftToOthers`) while the job has not ended. Throws the job's failure
    /// as the phase's.
    private func outcome(of work: QueuedWork) async throws -> (job: Int64, output: DerivativeOutput) {
        let id: Int64
        do { id = try await enqueuer.enqueue(work) } catch {
            throw StageFailure.transient(FailureReason(operation: "queue", "\(error)"))
        }
        let outcome: JobOutcome
        if waits {
            outcome = try await waiter.outcome(of: id)
        } else {
            guard let ended = try await waiter.outcomeIfEnded(of: id) else { throw PhaseLeftToOthers() }
            outcome = ended
        }
        switch outcome {
        case .done(let result):
            guard let output = DerivativeOutput(result: result) else {
                throw StageFailure.unusable(FailureReason(operation: "queue", "job \(id) returned no usable result"))
            }
            return (id, output)
        case .failed(let reason, let category, damaged: true):
            throw StageFailure.unusable(FailureReason(reason, category: category))
        case .failed(let reason, let category, damaged: false):
            // Its tries ran out without a word against the file (workers killed under it): the phase may try again.
            throw StageFailure.transient(FailureReason(operation: "queue", reason, category: category))
        }
    }

    /// The files `output` names that the library does not hold (relative paths): in its store when it has one.
    private func missingFiles(_ output: DerivativeOutput) async throws -> [String] {
        let paths = output.files.map(\.path), layout = layout
        guard !paths.isEmpty else { return [] }
        guard let store else { return try await BlockingWork.run { paths.filter { !FileSystem.exists(layout.absolute($0)) } } }
        var missing: [String] = []
        do {
            for path in paths where try await store.size(of: try ObjectKey(path)) == nil { missing.append(path) }
        } catch {
            throw StoreFiles.stageFailure(error)
        }
        return missing
    }
}
