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
/// Every stage writes its files under `tmp/` with a unique name and renames them into place, then records them
/// in the catalog once they are durable: a catalog row never points at a missing or partial file, and a stage
/// run again after a crash or timeout simply redoes its work. With a `groupCommit` (an import), files are made
/// durable and their rows written in batches with the item states; without one, each file is fsynced and its
/// row written at once. The blocking work runs on Dispatch threads.
public struct LibraryStages: PipelineStages {
    public let library: Library
    public var media: MediaEngine
    public var clipOptions: ClipOptions
    /// Written into new asset rows.
    public var runID: String?
    /// Told the bytes of each original copied (not of one found already in place, verified).
    public var onCopied: @Sendable (Int64) -> Void = { _ in }
    /// Counts this run's blocking work, so the run can wait for abandoned phases before it ends.
    var work: WorkTracker?
    /// Batches durability and catalog rows (see `GroupCommit`); nil: per file.
    var groupCommit: GroupCommit?
    /// A file was kept without preview (relative path, reason): media cairn recognises but cannot render here.
    public var onKeptWithoutPreview: @Sendable (String, FailureReason) -> Void = { _, _ in }
    /// A damaged original (library path) was set aside at the given path and copied anew from the source.
    public var onDamaged: @Sendable (String, String) -> Void = { _, _ in }
    /// Where stills with a same-named movie beside them wait for pairing instead of getting a clip now; nil: every
    /// still gets its clip in the synthesis lane.
    var deferredClips: DeferredClips?

    public init(library: Library, media: MediaEngine = MediaEngine(), clipOptions: ClipOptions = ClipOptions(),
                runID: String? = nil) {
        self.library = library
        self.media = media
        self.clipOptions = clipOptions
        self.runID = runID
    }

    // MARK: Stages

    public func transfer(_ item: ImportItem) async throws -> TransferResult {
        let checksum = item.checksum
        let layout = library.layout, catalog = library.catalog, runID = runID, onCopied = onCopied,
            onDamaged = onDamaged, commit = groupCommit
        try await BlockingWork.run(tracking: work) { () throws in
            let fileExtension = Self.originalExtension(of: item)
            let originalPath = layout.originalRelativePath(checksum, fileExtension: fileExtension)
            do {
                let hasher = try FileHasher()
                let placement = try OriginalsStore(layout: layout, syncsEachFile: commit == nil).place(
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
                throw StageFailure.unusable(FailureReason("\(error)"))
            }
            // `.alreadyPresent` too: an earlier run died after the copy and before cataloguing it.
            let asset = AssetRecord(
                checksum: checksum, kind: item.kind, size: item.byteCount, originalExtension: fileExtension,
                firstSourcePath: item.relativePath, originalPath: originalPath, importedAt: Date(), runID: runID)
            if let commit { return commit.add { $0.assets.append(asset) } }
            try Self.catalogWrite(item) { try catalog.insertAssets([asset]) }
        }
        return .copied
    }

    public func readMetadata(_ item: ImportItem) async throws {
        let checksum = item.checksum
        let catalog = library.catalog, media = media, onKept = onKeptWithoutPreview, commit = groupCommit
        let original = originalPath(of: item, checksum: checksum)
        let crashes = Self.crashesForTests(item)
        try await BlockingWork.run(tracking: work) { (interrupt) throws in
            if crashes { CrashEvidence.faultForTests() }
            let probe: MediaProbe
            do { probe = try media.probe(path: original, interrupt: interrupt) } catch {
                if try Self.keepWithoutPreview(item, checksum, error, catalog: catalog, onKept: onKept) { return }
                throw Self.failure(error)
            }
            let record = Self.probeRecord(checksum, probe)
            if let commit { return commit.add { $0.probes.append(record) } }
            try Self.catalogWrite(item) { try catalog.saveMediaProbe(record) }
        }
    }

    public func makeThumbnail(_ item: ImportItem) async throws {
        let checksum = item.checksum
        let layout = library.layout, catalog = library.catalog, media = media, onKept = onKeptWithoutPreview
        let commit = groupCommit
        let originalRelative = originalRelativePath(of: item, checksum: checksum)
        let original = layout.absolute(originalRelative)
        try await BlockingWork.run(tracking: work) { (interrupt) throws in
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
                if try Self.keepWithoutPreview(item, checksum, error, catalog: catalog, onKept: onKept) { return }
                throw Self.failure(error)
            }
            var moves = [(thumbnailTemporary, layout.absolute(thumbnailPath))]
            if rendered.preview != nil, !rendered.previewIsSource {
                moves.append((previewTemporary, layout.absolute(previewPath)))
            }
            try Self.moveIntoPlace(item, moves, commit: commit)
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
            try Self.save(item, files, catalog: catalog, commit: commit)
        }
    }

    public func synthesizeClip(_ item: ImportItem) async throws {
        let checksum = item.checksum
        let layout = library.layout, catalog = library.catalog, media = media, options = clipOptions
        let onKept = onKeptWithoutPreview, commit = groupCommit
        let original = originalPath(of: item, checksum: checksum)
        let deferred = deferredClips
        try await BlockingWork.run(tracking: work) { (interrupt) throws in
            if let deferred, DeferredClips.hasMotionSibling(item) {
                deferred.add(item)
                return
            }
            let clipPath = layout.derivedRelativePath(checksum, suffix: "clip.mp4")
            let temporary = TemporaryName.make(in: layout, for: clipPath)
            defer { unlink(temporary) }
            // A Samsung or Google motion photo carries its own movie: that is its clip, copied as the camera made it.
            if let embedded = try Self.embeddedMotion(original: original, to: temporary, media: media) {
                try Self.moveIntoPlace(item, [(temporary, layout.absolute(clipPath))], commit: commit)
                let record = DerivedFileRecord(
                    checksum: checksum, role: .clip, path: clipPath, format: embedded.codec, width: embedded.width,
                    height: embedded.height, byteCount: embedded.bytes, durationSeconds: embedded.seconds, createdAt: Date())
                try Self.save(item, [record], catalog: catalog, commit: commit)
                return
            }
            let clip: RenderedClip
            // Probed back by the engine before it returns: a clip that does not read back never counts.
            do { clip = try media.synthesizeClip(source: original, to: temporary, options: options, interrupt: interrupt) } catch {
                if try Self.keepWithoutPreview(item, checksum, error, catalog: catalog, onKept: onKept) { return }
                throw Self.failure(error)
            }
            let byteCount = FileSystem.size(temporary) ?? 0
            try Self.moveIntoPlace(item, [(temporary, layout.absolute(clipPath))], commit: commit)
            let record = DerivedFileRecord(
                checksum: checksum, role: .clip, path: clipPath, format: clip.codec, width: clip.width,
                height: clip.height, byteCount: byteCount, durationSeconds: clip.durationSeconds, createdAt: Date())
            try Self.save(item, [record], catalog: catalog, commit: commit)
        }
    }

    // MARK: Helpers

    /// A probe as the catalog keeps it: the columns listings sort and filter by, and the whole probe as JSON.
    static func probeRecord(_ checksum: Checksum, _ probe: MediaProbe) -> MediaProbeRecord {
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

    static func originalExtension(of item: ImportItem) -> String {
        // The last component only, found from the end (a split made an array of every folder, for each item).
        MediaClassifier.fileExtension(of: FileSystem.baseName(of: item.relativePath)).lowercased()
    }

    /// The original's absolute path: where an earlier run put it (the item says), or where this run's transfer
    /// did, named from the item's own file name. No catalog read, no thread hop.
    private func originalPath(of item: ImportItem, checksum: Checksum) -> String {
        library.layout.absolute(originalRelativePath(of: item, checksum: checksum))
    }

    private func originalRelativePath(of item: ImportItem, checksum: Checksum) -> String {
        item.originalPath ?? library.layout.originalRelativePath(checksum, fileExtension: Self.originalExtension(of: item))
    }

    /// A media failure in one line (the item is named where it is printed); only I/O-like failures are retried.
    /// Media cairn recognises but cannot render here (no decoder for its format, a RAW with no usable image, a
    /// metadata-only file) is kept, byte-identical, without preview: the item goes on to ready, and the asset
    /// says why. Damaged data (truncated, corrupt) is not this: it fails with its reason.
    static func keepWithoutPreview(_ item: ImportItem, _ checksum: Checksum, _ error: any Error, catalog: Catalog,
                                   onKept: @Sendable (String, FailureReason) -> Void) throws(StageFailure) -> Bool {
        guard let error = error as? MediaError, error.category == .unsupported else { return false }
        let reason = error.failure
        try catalogWrite(item) { try catalog.markKeptWithoutPreview(checksum, reason: reason.description) }
        onKept(item.relativePath, reason)
        return true
    }

    static func failure(_ error: any Error) -> StageFailure {
        guard let error = error as? MediaError else { return .transient(FailureReason("\(error)")) }
        return StageFailure(reason: error.failure, isRetryable: error.isRetryable)
    }

    /// A catalog write; a failure is retryable (a busy or briefly full database).
    static func catalogWrite(_ item: ImportItem, _ body: () throws -> Void) throws(StageFailure) {
        do { try body() } catch {
            throw StageFailure.transient(FailureReason("the catalog cannot be written: \(error)"))
        }
    }

    /// Derived files' rows: queued for the group commit, or written now (their files were fsynced).
    static func save(_ item: ImportItem, _ files: [DerivedFileRecord], catalog: Catalog,
                     commit: GroupCommit?) throws(StageFailure) {
        if let commit { return commit.add { $0.derivedFiles += files } }
        try catalogWrite(item) { try catalog.saveDerivedFiles(files) }
    }

    /// Renames each temporary file to its final path (creating its folder). Without a group commit, each file is
    /// fsynced before its rename and its folder after it; with one, the batch's sync covers them all.
    static func moveIntoPlace(_ item: ImportItem, _ moves: [(temporary: String, final: String)],
                              commit: GroupCommit?) throws(StageFailure) {
        do {
            for move in moves {
                if commit == nil { try FileSystem.syncFile(move.temporary) }
                try FileSystem.makeDirectories(FileSystem.parentDirectory(of: move.final))
                try FileSystem.rename(move.temporary, to: move.final, syncingFolder: commit == nil)
            }
        } catch {
            // The library file is named: it is not the item's own.
            throw StageFailure(reason: FailureReason(error.description), isRetryable: error.isTransient)
        }
    }
}
