import CairnCatalog
import CairnCore
import CairnHashing
import CairnLibrary
import CairnMedia
import CairnPipeline
import CairnScanner
import Foundation
import Glibc
import Synchronization

/// The real pipeline stages: hash-while-copy into the originals store, probe, thumbnail + preview, clip.
///
/// Every stage writes its files under `tmp/` with a unique name and renames them into place, and returns the
/// catalog rows that point at them (`StageRows`): it writes no catalog itself. The item-state store writes them
/// with the item's move, once the files are durable: a catalog row never points at a missing or partial file, and
/// a stage run again after a crash or timeout simply redoes its work. In an import, files are made durable in
/// batches (`GroupCommit`); with `syncsEachFile`, each is fsynced before its rename. The blocking work runs on the pool.
public struct LibraryStages: PipelineStages {
    /// The library's folder: the stages touch its files, never its catalog (a worker on another host mounts the
    /// folder alone).
    public let layout: LibraryLayout
    public var media: MediaEngine
    public var clipOptions: ClipOptions
    /// Written into new asset rows.
    public var runID: String?
    /// Told the bytes of each original copied (not of one found already in place, verified).
    public var onCopied: @Sendable (Int64) -> Void = { _ in }
    /// Counts this run's blocking work, so the run can wait for abandoned phases before it ends.
    package var work: WorkTracker?
    /// Whether each file is fsynced before its rename (nothing syncs the batch: a clip made after pairing).
    var syncsEachFile = true
    /// A file was kept without preview (relative path, reason): media cairn recognises but cannot render here.
    public var onKeptWithoutPreview: @Sendable (String, FailureReason) -> Void = { _, _ in }
    /// A damaged original (library path) was set aside at the given path and copied anew from the source.
    public var onDamaged: @Sendable (String, String) -> Void = { _, _ in }
    /// Where stills with a same-named movie beside them wait for pairing instead of getting a clip now; nil: every
    /// still gets its clip in the synthesis lane.
    var deferredClips: DeferredClips?

    public init(layout: LibraryLayout, media: MediaEngine = MediaEngine(), clipOptions: ClipOptions = ClipOptions(),
                runID: String? = nil) {
        self.layout = layout
        self.media = media
        self.clipOptions = clipOptions
        self.runID = runID
    }

    // MARK: Stages

    public func transfer(_ item: ImportItem) async throws -> PhaseResult {
        let checksum = item.checksum
        let layout = self.layout, runID = runID, onCopied = onCopied, onDamaged = onDamaged
        let syncsEachFile = syncsEachFile
        return try await BlockingWork.run(tracking: work) { () throws -> PhaseResult in
            let fileExtension = Self.originalExtension(of: item)
            let originalPath = layout.originalRelativePath(checksum, fileExtension: fileExtension)
            do {
                let hasher = try FileHasher()
                let placement = try OriginalsStore(layout: layout, syncsEachFile: syncsEachFile).place(
                    sourcePath: item.sourcePath, checksum: checksum, relativePath: originalPath,
                    hasher: hasher)
                switch placement {
                case .copied(let bytes): onCopied(bytes)
                case .replacedDamaged(let bytes, let quarantinedAt):
                    onCopied(bytes)
                    onDamaged(originalPath, quarantinedAt)
                case .alreadyPresent: break
                }
            } catch let error as HashingError {
                throw StageFailure(reason: error.failure, isRetryable: error.isTransient)
            } catch {
                throw StageFailure.unusable(FailureReason(error))
            }
            // `.alreadyPresent` too: an earlier run died after the copy and before cataloguing it.
            return PhaseResult(.copied, products: StageRows(assets: [Self.asset(item, originalPath: originalPath, runID: runID)]))
        }
    }

    /// The asset row a transfer returns: the item's content at `originalPath`.
    package static func asset(_ item: ImportItem, originalPath: String, runID: String?) -> AssetRecord {
        AssetRecord(checksum: item.checksum, kind: item.kind, size: item.byteCount,
                    originalExtension: originalExtension(of: item), firstSourcePath: item.relativePath,
                    originalPath: originalPath, importedAt: Date(), runID: runID)
    }

    public func readMetadata(_ item: ImportItem) async throws -> PhaseResult {
        let checksum = item.checksum
        let media = media, onKept = onKeptWithoutPreview
        let original = layout.absolute(Self.originalRelativePath(of: item, in: layout))
        let crashes = Self.crashesForTests(item)
        if let delay = Self.itemDelayForTests { try await Task.sleep(for: delay) }
        return try await BlockingWork.run(tracking: work) { (interrupt) throws -> PhaseResult in
            if crashes { CrashEvidence.faultForTests() }
            let probe: MediaProbe
            do { probe = try media.probe(path: original, interrupt: interrupt) } catch {
                if let kept = Self.keptWithoutPreview(item, error, onKept: onKept) { return kept }
                throw Self.failure(error)
            }
            return PhaseResult(products: StageRows(probes: [Self.probeRecord(checksum, probe)]), footprint: probe.memory)
        }
    }

    public func makeThumbnail(_ item: ImportItem) async throws -> PhaseResult {
        let checksum = item.checksum
        let layout = self.layout, media = media, onKept = onKeptWithoutPreview, syncsEachFile = syncsEachFile
        let originalRelative = Self.originalRelativePath(of: item, in: layout)
        let original = layout.absolute(originalRelative)
        return try await BlockingWork.run(tracking: work) { (interrupt) throws -> PhaseResult in
            let thumbnailPath = layout.derivedRelativePath(checksum, suffix: "thumb.\(media.thumbnailFormat.fileExtension)")
            let previewPath = layout.derivedRelativePath(checksum, suffix: "preview.jpg")
            let thumbnailTemporary = TemporaryName.make(in: layout, for: thumbnailPath)
            let previewTemporary = TemporaryName.make(in: layout, for: previewPath)
            var movedIntoPlace = false
            defer {
                if !movedIntoPlace {
                    unlink(thumbnailTemporary)
                    unlink(previewTemporary)
                }
            }
            let rendered: RenderedDerivatives
            do {
                rendered = try media.renderDerivatives(source: original, kind: item.kind, thumbnail: thumbnailTemporary,
                                                       preview: previewTemporary, sourceMayBePreview: true,
                                                       interrupt: interrupt)
            } catch {
                if let kept = Self.keptWithoutPreview(item, error, onKept: onKept) { return kept }
                throw Self.failure(error)
            }
            var moves = [(thumbnailTemporary, layout.absolute(thumbnailPath))]
            if rendered.preview != nil, !rendered.previewIsSource {
                moves.append((previewTemporary, layout.absolute(previewPath)))
            }
            try Self.moveIntoPlace(item, moves, syncingEach: syncsEachFile)
            movedIntoPlace = true  // nothing is left under tmp/ to unlink
            var files = [DerivedFileRecord(
                checksum: checksum, role: .thumbnail, path: thumbnailPath, format: rendered.thumbnail.format.rawValue,
                width: rendered.thumbnail.width, height: rendered.thumbnail.height,
                byteCount: Int64(rendered.thumbnail.byteCount), createdAt: Date())]
            if let preview = rendered.preview {
                files.append(DerivedFileRecord(
                    checksum: checksum, role: .preview, path: rendered.previewIsSource ? originalRelative : previewPath,
                    format: preview.format.rawValue,
                    width: preview.width, height: preview.height, byteCount: Int64(preview.byteCount), createdAt: Date()))
            }
            return PhaseResult(products: StageRows(derivedFiles: files))
        }
    }

    public func synthesizeClip(_ item: ImportItem) async throws -> PhaseResult {
        let checksum = item.checksum
        let layout = self.layout, media = media, options = clipOptions
        let onKept = onKeptWithoutPreview, syncsEachFile = syncsEachFile
        let original = layout.absolute(Self.originalRelativePath(of: item, in: layout))
        let deferred = deferredClips
        return try await BlockingWork.run(tracking: work) { (interrupt) throws -> PhaseResult in
            if let deferred, DeferredClips.hasMotionSibling(item) {
                switch deferred.decide(item) {
                case .waitForPairing: throw PhaseLeftToOthers()
                case .noClip: return .done
                case .makeClip: break
                }
            }
            let clipPath = layout.derivedRelativePath(checksum, suffix: "clip.mp4")
            let temporary = TemporaryName.make(in: layout, for: clipPath)
            defer { unlink(temporary) }
            let clip: (codec: String, width: Int, height: Int, bytes: Int64, seconds: Double?)
            // A Samsung or Google motion photo carries its own movie: that is its clip, copied as the camera made it.
            if let embedded = try Self.embeddedMotion(original: original, to: temporary, media: media) {
                clip = (embedded.codec, embedded.width, embedded.height, embedded.bytes, embedded.seconds)
            } else {
                // Probed back by the engine before it returns: a clip that does not read back never counts.
                do {
                    let made = try media.synthesizeClip(source: original, to: temporary, options: options, interrupt: interrupt)
                    clip = (made.codec, made.width, made.height, FileSystem.size(temporary) ?? 0, made.durationSeconds)
                } catch {
                    if let kept = Self.keptWithoutPreview(item, error, onKept: onKept) { return kept }
                    throw Self.failure(error)
                }
            }
            try Self.moveIntoPlace(item, [(temporary, layout.absolute(clipPath))], syncingEach: syncsEachFile)
            let record = DerivedFileRecord(
                checksum: checksum, role: .clip, path: clipPath, format: clip.codec, width: clip.width,
                height: clip.height, byteCount: clip.bytes, durationSeconds: clip.seconds, createdAt: Date())
            return PhaseResult(products: StageRows(derivedFiles: [record]))
        }
    }

    // MARK: Helpers

    /// A probe as the catalog keeps it: the columns listings sort and filter by, and the whole probe as JSON.
    package static func probeRecord(_ checksum: Checksum, _ probe: MediaProbe) -> MediaProbeRecord {
        let json = (try? JSONEncoder().encode(probe)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return MediaProbeRecord(
            checksum: checksum, container: probe.container, width: probe.width, height: probe.height,
            durationSeconds: probe.durationSeconds, captureDate: probe.captureDate, cameraMake: probe.cameraMake,
            cameraModel: probe.cameraModel, latitude: probe.gps?.latitude, longitude: probe.gps?.longitude,
            altitude: probe.gps?.altitude, codec: probe.streams.first { $0.type == "video" }?.codec,
            probeJSON: json, probedAt: Date())
    }

    /// The still's embedded movie written to `temporary` and probed back, or nil when it has none (or the movie
    /// does not read as a video: then a clip is synthesized as for any still).
    static func embeddedMotion(original: String, to temporary: String, media: MediaEngine)
        throws(StageFailure) -> (codec: String, width: Int, height: Int, seconds: Double?, bytes: Int64)?
    {
        let written: Int?
        do { written = try MotionPhoto.extract(from: original, to: temporary) } catch { throw failure(error) }
        guard let written, let probe = try? media.probe(path: temporary), probe.kind == .video,
              let codec = probe.streams.first(where: { $0.type == "video" })?.codec,
              let width = probe.width, let height = probe.height else {
            unlink(temporary)
            return nil
        }
        return (codec, width, height, probe.durationSeconds, Int64(written))
    }

    /// The extension an original takes from the item's file name, lowercased ("" when none).
    /// The tests' fault hook: `CAIRN_TEST_CRASH_ON=NAME` makes probing a file whose name is NAME crash the worker
    /// with a real SIGSEGV, every time, as a decoder's bug would. Unset, as it is outside the tests, it does nothing.
    static func crashesForTests(_ item: ImportItem) -> Bool {
        guard let name = crashOnName else { return false }
        return FileSystem.baseName(of: item.relativePath) == name
    }

    /// Read once: the environment is copied into a dictionary on every read, and the metadata phase is per file.
    private static let crashOnName: String? = {
        guard let name = ProcessInfo.processInfo.environment["CAIRN_TEST_CRASH_ON"], !name.isEmpty else { return nil }
        return name
    }()

    /// The tests' brake: `CAIRN_TEST_ITEM_DELAY_MS=N` makes every file's metadata phase wait N ms first, so a test
    /// that watches a run (the live page) sees it in progress on any machine. Unset, it does nothing.
    private static let itemDelayForTests: Duration? = {
        guard let text = ProcessInfo.processInfo.environment["CAIRN_TEST_ITEM_DELAY_MS"], let milliseconds = Int(text),
              milliseconds > 0 else { return nil }
        return .milliseconds(milliseconds)
    }()

    package static func originalExtension(of item: ImportItem) -> String {
        // The last component only, found from the end (a split made an array of every folder, for each item).
        MediaClassifier.fileExtension(of: FileSystem.baseName(of: item.relativePath)).lowercased()
    }

    /// The original's path in `layout`, relative to its root: where an earlier run put it, else where the transfer
    /// puts it.
    package static func originalRelativePath(of item: ImportItem, in layout: LibraryLayout) -> String {
        item.originalPath ?? layout.originalRelativePath(item.checksum, fileExtension: originalExtension(of: item))
    }

    /// A media failure in one line (the item is named where it is printed); only I/O-like failures are retried.
    /// Media cairn recognises but cannot render here (no decoder for its format, a RAW with no usable image, a
    /// metadata-only file) is kept, byte-identical, without preview: the item goes on to ready, and the asset
    /// says why. Damaged data (truncated, corrupt) is not this: it fails with its reason.
    /// Returns the phase's result when `error` says so (the reason travels with the item's move), nil otherwise.
    static func keptWithoutPreview(_ item: ImportItem, _ error: any Error,
                                   onKept: @Sendable (String, FailureReason) -> Void) -> PhaseResult? {
        guard let error = error as? MediaError, error.category == .unsupported else { return nil }
        let reason = error.failure
        onKept(item.relativePath, reason)
        return PhaseResult(products: StageRows(keptWithoutPreview: [(item.checksum, reason.description)]))
    }

    static func failure(_ error: any Error) -> StageFailure {
        guard let error = error as? MediaError else { return .transient(FailureReason(error)) }
        return StageFailure(reason: error.failure, isRetryable: error.isRetryable)
    }

    /// Renames each temporary file to its final path (creating its folder). `syncingEach`: each file is fsynced
    /// before its rename and its folder after it; otherwise the batch's sync covers them all.
    static func moveIntoPlace(_ item: ImportItem, _ moves: [(temporary: String, final: String)],
                              syncingEach: Bool) throws(StageFailure) {
        do {
            for move in moves {
                if syncingEach { try FileSystem.syncFile(move.temporary) }
                try FileSystem.makeDirectories(FileSystem.parentDirectory(of: move.final))
                try FileSystem.rename(move.temporary, to: move.final, syncingFolder: syncingEach)
            }
        } catch {
            // The library file is named: it is not the item's own.
            throw StageFailure(reason: FailureReason(error.description, category: FailureCategory(error.code)),
                               isRetryable: error.isTransient)
        }
    }
}
