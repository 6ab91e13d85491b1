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
public struct DerivativeJobs: Sendable {
    private let stages: LibraryStages

    public init(layout: LibraryLayout, media: MediaEngine = MediaEngine(), clipOptions: ClipOptions = ClipOptions()) {
        stages = LibraryStages(layout: layout, media: media, clipOptions: clipOptions)
    }

    /// Runs one job; returns its result (`DerivativeOutput`), or throws a `JobFailure` that says whether another
    /// attempt may do better.
    public func run(_ lease: Lease) async throws -> String {
        guard let job = DerivativeJob(payload: lease.work.payload), let checksum = Checksum(hex: lease.work.checksum) else {
            throw JobFailure(reason: "not a cairn derivative job (payload \(lease.work.payload.prefix(80)))", isRetryable: false)
        }
        let item = ImportItem(relativePath: job.name, sourceRoot: "", kind: job.kind, byteCount: 0, checksum: checksum,
                              originalPath: job.original)
        let result: PhaseResult
        do {
            switch lease.work.kind {
            case .thumbnail: result = try await stages.makeThumbnail(item)
            case .clip: result = try await stages.synthesizeClip(item)
            case .probe, .preview:
                throw JobFailure(reason: "cairn queues no \(lease.work.kind.rawValue) jobs of their own", isRetryable: false)
            }
        } catch let failure as StageFailure {
            throw JobFailure(reason: failure.description, isRetryable: failure.isRetryable, category: failure.reason.category)
        }
        return DerivativeOutput(result.products as? StageRows).result
    }
}
