import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMedia
import CairnPipeline
import CairnQueue
import CairnStages
import Foundation

/// Runs queued derivative jobs against a library folder with the stages an import's lanes run, so a job makes the
/// files the import would have made. Each file is synced and renamed into place before the job returns: the
/// import that records it trusts it durable. The catalog is never touched here.
///
/// With a memory budget, each job waits until the worker's budget has room for its estimate, from a probe of the
/// original (`MemoryGate`); one estimated above what the cgroup allows fails with its memory reason, not retried.
public struct DerivativeJobs: Sendable {
    private let stages: LibraryStages
    private let layout: LibraryLayout
    private let gate: MemoryGate?

    /// `media` nil: the engine `memory` allows (`MediaConfiguration.within`), or the default without a budget.
    public init(layout: LibraryLayout, media: MediaEngine? = nil, clipOptions: ClipOptions = ClipOptions(),
                memory: MemoryBudget? = nil) {
        let media = media ?? MediaEngine(configuration: memory.map { .within($0) } ?? MediaConfiguration())
        stages = LibraryStages(layout: layout, media: media, clipOptions: clipOptions)
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
        let size = FileSystem.size(original) ?? 0
        let item = ImportItem(relativePath: job.name, sourceRoot: "", kind: job.kind, byteCount: size, checksum: checksum,
                              originalPath: job.original)
        let stages = stages
        let work = { () async throws -> PhaseResult in
            lane == .thumbnail ? try await stages.makeThumbnail(item) : try await stages.synthesizeClip(item)
        }
        let result: PhaseResult
        do {
            if let gate {
                let bytes = try await Self.estimate(item, in: lane, original: original, media: stages.media)
                result = try await gate.run(holding: bytes, work)
            } else {
                result = try await work()
            }
        } catch let failure as StageFailure {
            throw JobFailure(reason: failure.description, isRetryable: failure.isRetryable, category: failure.reason.category)
        } catch let refusal as MemoryRefusal {
            throw JobFailure(reason: refusal.description, isRetryable: false, category: .memory)
        }
        return DerivativeOutput(result.products as? StageRows).result
    }

    /// The job's estimate: from a probe of the original, as the import's metadata phase makes it; an original the
    /// probe cannot read gets the guess for a file not probed (its stage then fails with the probe's reason).
    static func estimate(_ item: ImportItem, in lane: Lane, original: String, media: MediaEngine) async throws -> Int64 {
        let footprint = try await BlockingPool.run { try? media.probe(path: original).memory }
        return footprint?.bytes(in: lane) ?? MemoryFootprint.unprobed(item, in: lane)
    }
}
