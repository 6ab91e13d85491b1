import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMedia
import CairnPipeline
import CairnQueue
import CairnStages
import CairnStore
import Foundation

/// Runs queued derivative jobs against a library folder with the stages an import's lanes run, so a job makes the
/// files the import would have made. Each file is synced and renamed into place before the job returns: the
/// import that records it trusts it durable. The catalog is never touched here.
///
/// With a store (`--store`), a job reads its original from the store into the folder unless it is there, and puts
/// what it made to the store before it returns; a folder of the worker's own (`ownsFolder`) keeps nothing after
/// (`StoreStages(jobsIn:store:ownsFolder:)`).
///
/// With a memory budget, each job waits until the worker's budget has room for its estimate, from a probe of the
/// original (`MemoryGate`); one estimated above what the cgroup allows fails with its memory reason, not retried.
public struct DerivativeJobs: Sendable {
    private let stages: LibraryStages
    private let stored: StoreStages?
    private let layout: LibraryLayout
    private let gate: MemoryGate?

    /// `media` nil: the engine `memory` allows (`MediaConfiguration.within`), or the default without a budget.
    public init(layout: LibraryLayout, store: (any ObjectStore)? = nil, ownsFolder: Bool = false, media: MediaEngine? = nil,
                clipOptions: ClipOptions = ClipOptions(), memory: MemoryBudget? = nil) {
        let media = media ?? MediaEngine(configuration: memory.map { .within($0) } ?? MediaConfiguration())
        let stages = LibraryStages(layout: layout, media: media, clipOptions: clipOptions)
        self.stages = stages
        stored = store.map { StoreStages(jobsIn: stages, store: $0, ownsFolder: ownsFolder) }
        self.layout = layout
        gate = memory.map { MemoryGate(budget: $0) }
    }

    /// What the jobs running now hold of the worker's memory budget, by their estimates (0 without one).
    public var memoryInUse: Int64 { gate?.inUse ?? 0 }

    /// Runs one job; returns its result (`DerivativeOutput`), or throws a `JobFailure` that says whether another
    /// attempt may do better.
    public func run(_ lease: Lease) async throws -> String {
        guard let job = DerivativeJob(payload: lease.work.payload), let checksum = Checksum(hex: lease.work.checksum) else {
            throw JobFailure(reason: "not a cairn derivative job (payload \(lease.work.payload.prefix(80)))", isRetryable: false)
        }
        let lane: Lane
        switch lease.work.kind {
        case .thumbnail: lane = .thumbnail
        case .clip: lane = .synthesis
        case .probe, .preview:
            throw JobFailure(reason: "cairn queues no \(lease.work.kind.rawValue) jobs of their own", isRetryable: false)
        }
        let original = layout.absolute(job.original)
        let result: PhaseResult
        do {
            if let stored {
                // The original is read from the store once, before the estimate's probe, and held until the job ends.
                let held = ImportItem(relativePath: job.name, sourceRoot: "", kind: job.kind, byteCount: 0,
                                      checksum: checksum, originalPath: job.original)
                result = try await stored.holdingOriginal(of: held) {
                    try await run(job, checksum, in: lane, original: original, with: stored)
                }
            } else {
                result = try await run(job, checksum, in: lane, original: original, with: stages)
            }
        } catch let failure as StageFailure {
            throw JobFailure(reason: failure.description, isRetryable: failure.isRetryable, category: failure.reason.category)
        } catch let refusal as MemoryRefusal {
            throw JobFailure(reason: refusal.description, isRetryable: false, category: .memory)
        }
        return DerivativeOutput(result.products as? StageRows).result
    }

    /// The job's phase, once the memory budget has room for its estimate.
    private func run(_ job: DerivativeJob, _ checksum: Checksum, in lane: Lane, original: String,
                     with stages: any PipelineStages) async throws -> PhaseResult {
        let item = ImportItem(relativePath: job.name, sourceRoot: "", kind: job.kind,
                              byteCount: FileSystem.size(original) ?? 0, checksum: checksum, originalPath: job.original)
        let work = { () async throws -> PhaseResult in
            lane == .thumbnail ? try await stages.makeThumbnail(item) : try await stages.synthesizeClip(item)
        }
        guard let gate else { return try await work() }
        let bytes = try await Self.estimate(item, in: lane, original: original, media: self.stages.media)
        return try await gate.run(holding: bytes, work)
    }

    /// The job's estimate: from a probe of the original, as the import's metadata phase makes it; an original the
    /// probe cannot read gets the guess for a file not probed (its stage then fails with the probe's reason).
    static func estimate(_ item: ImportItem, in lane: Lane, original: String, media: MediaEngine) async throws -> Int64 {
        let footprint = try await BlockingPool.run { try? media.probe(path: original).memory }
        return footprint?.bytes(in: lane) ?? MemoryFootprint.unprobed(item, in: lane)
    }
}
