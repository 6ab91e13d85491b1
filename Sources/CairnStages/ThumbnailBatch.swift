import CairnCore
import CairnMedia
import CairnPipeline
import Foundation

/// `cairn thumbnail FILE…`: the files go through the import's own lanes (metadata, then thumbnail, as wide as
/// an import's), each decoded once, and each file's line is reported in the order the files were given.
/// Nothing is copied and no catalog is written: the files are read where they are, and records stay in memory.
public struct ThumbnailBatch: Sendable {
    /// One file's result, reported in the files' order.
    public enum Line: Sendable {
        case made(file: String, thumbnail: RenderedImage)
        case failed(file: String, reason: FailureReason)
    }

    public let files: [String]
    public let outputFolder: String
    public let makesPreviews: Bool
    public let media: MediaEngine
    /// What the decodes may hold at once.
    public let memory: MemoryBudget

    /// `media` nil: the engine `memory` allows (`MediaConfiguration.within`).
    public init(files: [String], outputFolder: String, makesPreviews: Bool, media: MediaEngine? = nil,
                memory: MemoryBudget = .detected(.read())) {
        self.files = files
        self.outputFolder = outputFolder
        self.makesPreviews = makesPreviews
        self.media = media ?? MediaEngine(configuration: .within(memory))
        self.memory = memory
    }

    /// Where each file's thumbnail goes: its name without extension, or its whole name when two files given share
    /// a stem (IMG_1.JPG and IMG_1.HEIC must not overwrite each other's thumbnails).
    public func stems() -> [String] {
        var seen: Set<String> = []
        return files.map { file in
            let name = (file as NSString).lastPathComponent
            let stem = (name as NSString).deletingPathExtension
            return seen.insert(stem).inserted ? stem : name
        }
    }

    /// Runs every file; `report` gets each line in the files' order as soon as it and those before it are done.
    /// Returns the number of files that failed.
    public func run(cores: Int = ProcessInfo.processInfo.activeProcessorCount,
                    report: @escaping @Sendable (Line) -> Void) async throws -> Int {
        var configuration = PipelineConfiguration.defaults(cores: cores)
        configuration.clipsEnabled = false
        configuration.memory = memory
        let stems = stems()
        let targets = files.indices.map { index in
            ThumbnailStages.Target(
                source: files[index],
                thumbnail: "\(outputFolder)/\(stems[index])-thumb.\(media.thumbnailFormat.fileExtension)",
                preview: makesPreviews ? "\(outputFolder)/\(stems[index])-preview.jpg" : nil)
        }
        let stages = ThumbnailStages(media: media, targets: targets)
        let records = files.indices.map { index in
            let size = (try? FileManager.default.attributesOfItem(atPath: files[index])[.size] as? Int64) ?? nil
            // The checksum is an import's content address; these files are only read, so none is computed.
            return ItemRecord(item: ImportItem(id: ItemID(Int64(index + 1)), relativePath: files[index], sourceRoot: "",
                                               kind: .photo, byteCount: size ?? 0, checksum: ThumbnailStages.unaddressed))
        }
        let ordered = OrderedLines(count: files.count, report: report)
        let scheduler = PipelineScheduler(configuration: configuration, stages: stages,
                                          store: UnkeptItemStateStore()) { event in
            guard case .transitioned(let item, _, let state) = event, state.isTerminal else { return }
            let index = Int(item.id.rawValue) - 1
            if let thumbnail = stages.made(index) {
                ordered.finished(index, .made(file: files[index], thumbnail: thumbnail))
            } else {
                ordered.finished(index, .failed(file: files[index],
                                                reason: state.failure?.reason ?? FailureReason("not made")))
            }
        }
        _ = try await scheduler.run(records)
        return files.count - stages.madeCount
    }
}

/// Holds lines that finish early until every line before them has been reported.
private final class OrderedLines: Sendable {
    private struct Pending {
        var next = 0
        var waiting: [Int: ThumbnailBatch.Line] = [:]
    }

    private let pending = Locked(Pending())
    private let count: Int
    private let report: @Sendable (ThumbnailBatch.Line) -> Void

    init(count: Int, report: @escaping @Sendable (ThumbnailBatch.Line) -> Void) {
        self.count = count
        self.report = report
    }

    func finished(_ index: Int, _ line: ThumbnailBatch.Line) {
        pending.withLock { state in
            state.waiting[index] = line
            while state.next < count, let ready = state.waiting.removeValue(forKey: state.next) {
                report(ready)
                state.next += 1
            }
        }
    }
}

/// The stages of a thumbnail batch: nothing to transfer, a probe for the kind, one decode for the derivatives.
private final class ThumbnailStages: PipelineStages {
    struct Target: Sendable {
        var source: String
        var thumbnail: String
        var preview: String?
    }

    static let unaddressed = Checksum(bytes: [UInt8](repeating: 0, count: Checksum.byteCount))!

    private let media: MediaEngine
    private let targets: [Target]
    private let kinds = Locked<[Int: MediaKind]>([:])
    private let thumbnails = Locked<[Int: RenderedImage]>([:])

    init(media: MediaEngine, targets: [Target]) {
        self.media = media
        self.targets = targets
    }

    func made(_ index: Int) -> RenderedImage? { thumbnails.withLock { $0[index] } }
    var madeCount: Int { thumbnails.withLock { $0.count } }

    func transfer(_ item: ImportItem) async throws -> PhaseResult { .done }

    func readMetadata(_ item: ImportItem) async throws -> PhaseResult {
        let index = Int(item.id.rawValue) - 1, media = media, source = targets[index].source
        let probe = try await BlockingWork.run(interruptible: { (interrupt) throws -> MediaProbe in
            do { return try media.probe(path: source, interrupt: interrupt) } catch { throw LibraryStages.failure(error) }
        })
        kinds.withLock { $0[index] = probe.kind }
        return PhaseResult(footprint: probe.memory)
    }

    func makeThumbnail(_ item: ImportItem) async throws -> PhaseResult {
        let index = Int(item.id.rawValue) - 1, media = media, target = targets[index]
        let kind = kinds.withLock { $0[index] } ?? .photo
        let rendered = try await BlockingWork.run(interruptible: { (interrupt) throws -> RenderedImage in
            do {
                return try media.renderDerivatives(source: target.source, kind: kind, thumbnail: target.thumbnail,
                                                   preview: target.preview, interrupt: interrupt).thumbnail
            } catch { throw LibraryStages.failure(error) }
        })
        thumbnails.withLock { $0[index] = rendered }
        return .done
    }

    func synthesizeClip(_ item: ImportItem) async throws -> PhaseResult { .done }
}
