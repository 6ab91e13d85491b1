import CairnArchive
import CairnCatalog
import CairnCore
import CairnHashing
import CairnImmich
import CairnLibrary
import CairnMedia
import CairnPipeline
import CairnScanner
import CairnStages
import Foundation

/// The lane work of an Immich destination: the transfer lane uploads (Immich makes its own thumbnails and reads
/// its own metadata, so the route ends there). Before the upload the source file is probed for its capture time
/// and length, which the upload carries; a file that cannot be probed is uploaded with its file times all the
/// same (the server keeps the bytes: backing up is the point). Each upload's asset id goes with the item's move
/// (its `StageRows`), as a library import's original does.
struct ImmichStages: PipelineStages {
    let destination: ImmichDestination
    package let run: DestinationRun

    func transfer(_ item: ImportItem) async throws -> PhaseResult {
        if let assetID = destination.takePresence(of: item.checksum)?.assetID {
            return PhaseResult(.alreadyInLibrary, products: rows(item, assetID: assetID, probe: nil))
        }
        // Immich 3.0 keeps an empty upload as an asset it can never show, and 3.1 refuses it ("File is empty",
        // `file-upload.interceptor.ts`): not sent, and said so.
        guard item.byteCount > 0 else { throw Self.emptyFile }
        let media = run.media, name = FileSystem.baseName(of: item.relativePath)
        let scratch = run.library.layout.temporaryDirectory
        let content: ImmichUploadFile.Content, modified: Date
        var probe: MediaProbe?
        var held: HeldEntryBytes?
        var readable: ReadableSource?
        defer {
            readable?.close()
            held?.release()
        }
        if let archive = SourceArchive.split(item.sourcePath)?.archive, item.byteCount <= Self.entryBytesInMemory {
            // An archive's entry of a photo's size is read out of it once, into memory, and sent from there; a JPEG or
            // PNG is probed there too, anything else from a copy in the state folder's tmp/ (removed after).
            let entry = try await HeldEntryBytes.read(item, work: run.work)
            held = entry
            content = .bytes(entry.bytes)
            probe = try? media.probeStill(bytes: entry.bytes, name: name)
            if probe == nil { readable = try await ReadableSource.write(entry, of: item, scratch: scratch, work: run.work) }
            modified = (try? FileManager.default.attributesOfItem(atPath: archive)[.modificationDate] as? Date) ?? Date()
        } else {
            // A file, or a larger entry copied out into the state folder's tmp/ (removed after).
            let source = try await ReadableSource.open(item, scratch: scratch, work: run.work)
            readable = source
            content = .file(source.path)
            modified = (try? FileManager.default.attributesOfItem(atPath: source.path)[.modificationDate] as? Date) ?? Date()
        }
        if probe == nil, let path = readable?.path {
            probe = try? await BlockingWork.run(tracking: run.work) { () throws -> MediaProbe in try media.probe(path: path) }
        }
        let taken = probe?.captureTime
        let offset = taken?.offset.flatMap(UTCOffset.parse)
        let createdAt = taken?.instant.map { Timestamp.withMilliseconds($0, offsetSeconds: offset) }
            ?? Timestamp.withMilliseconds(modified)
        guard let uploadName = ImmichUploadName.name(for: name, kind: item.kind, container: probe?.container,
                                                     accepted: destination.identity.mediaExtensions) else {
            throw StageFailure.unusable(FailureReason(
                "not accepted by this Immich server (no file type it takes fits \(name))", category: .unsupported))
        }
        if uploadName != name { destination.renamed(name, as: uploadName) }
        // An archive's entry takes the XMP beside it in the archive, read out of it as the entry was.
        let sidecar: ImmichUploadFile.Content? = SourceArchive.split(item.sourcePath) == nil
            ? Self.xmpSidecar(of: item.sourcePath).map { .file($0) }
            : (try? await BlockingWork.run(tracking: run.work) { try Self.archivedXMPSidecar(of: item.sourcePath) })
                .flatMap { $0 }.map { .bytes($0) }
        let file = ImmichUploadFile(
            content: content, byteCount: item.byteCount, checksum: item.checksum,
            filename: uploadName, createdAt: createdAt,
            modifiedAt: Timestamp.withMilliseconds(modified),
            durationMilliseconds: item.kind == .video ? probe?.durationSeconds.map { Int(($0 * 1000).rounded()) } : nil,
            sidecar: sidecar)
        let result: ImmichUploadResult
        do { result = try await destination.client.upload(file) } catch {
            throw stageFailure(error)
        }
        let rows = rows(item, assetID: result.assetID, probe: probe)
        guard case .created = result else { return PhaseResult(.alreadyInLibrary, products: rows) }
        run.onCopied(item.byteCount)
        return PhaseResult(.copied, products: rows)
    }

    func readMetadata(_ item: ImportItem) async throws -> PhaseResult { throw Self.notALane }
    func makeThumbnail(_ item: ImportItem) async throws -> PhaseResult { throw Self.notALane }
    func synthesizeClip(_ item: ImportItem) async throws -> PhaseResult { throw Self.notALane }

    static let notALane = StageFailure.unusable("an Immich destination makes no derivatives")
    /// An archive's entry up to this size (a photo's, not a film's) is sent from memory, never copied to disk.
    static let entryBytesInMemory: Int64 = 16 << 20
    static let emptyFile = StageFailure.unusable(FailureReason(
        "empty file (0 bytes): not sent to Immich, which cannot show it", category: .corrupt))

    /// The asset row (its original in Immich) and the probe, for the item's move.
    private func rows(_ item: ImportItem, assetID: String, probe: MediaProbe?) -> StageRows {
        let asset = AssetRecord(
            checksum: item.checksum, kind: item.kind, size: item.byteCount,
            originalExtension: LibraryStages.originalExtension(of: item), firstSourcePath: item.relativePath,
            originalPath: "", remoteID: assetID, importedAt: Date(), runID: run.runID)
        return StageRows(assets: [asset], probes: probe.map { [LibraryStages.probeRecord(item.checksum, $0)] } ?? [])
    }

    /// A refused key stops the run (the cancellation), its items resuming next time; other failures are the
    /// item's, retried or not as Immich's answer says.
    private func stageFailure(_ failure: ImmichFailure) -> StageFailure {
        switch failure.kind {
        case .needsAuth:
            destination.cancellation.cancel(deadline: .seconds(5))
            return .transient(failure.failure)
        case .retryable: return .transient(failure.failure)
        case .permanent: return .unusable(failure.failure)
        }
    }

    /// The XMP sidecar beside an archive's entry in its archive (or in another part of a split one), by the same
    /// names: its bytes, or nil when there is none (or it is empty, or too large).
    static func archivedXMPSidecar(of path: String) throws -> [UInt8]? {
        for sidecar in xmpCandidates(of: path) where SourceArchive.holds(sidecar) {
            let bytes = try FileHasher().readWhole(path: sidecar, expected: nil)
            guard !bytes.isEmpty, bytes.count <= SidecarMatcher.maxBytes else { continue }
            return bytes
        }
        return nil
    }

    /// The XMP sidecar beside a media file (`IMG_1.jpg.xmp` or `IMG_1.xmp`, either case), as the scanner's
    /// matcher pairs them; Immich takes it with the upload. An empty one is left out: Immich 3.1 refuses the whole
    /// upload for an empty file part.
    static func xmpSidecar(of path: String) -> String? {
        xmpCandidates(of: path).first { sidecar in
            guard FileSystem.exists(sidecar), let size = FileSystem.size(sidecar) else { return false }
            return size > 0 && size <= Int64(SidecarMatcher.maxBytes)
        }
    }

    /// The paths an XMP sidecar of `path` may have (`IMG_1.jpg.xmp` or `IMG_1.xmp`, either case) that the scanner's
    /// matcher pairs with it, in the order tried.
    static func xmpCandidates(of path: String) -> [String] {
        let folder = FileSystem.parentDirectory(of: path), name = FileSystem.baseName(of: path)
        let stem = name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
        return [name + ".xmp", name + ".XMP", stem + ".xmp", stem + ".XMP"]
            .filter { SidecarMatcher.media(for: $0, among: [name]) == name }.map { folder + "/" + $0 }
    }
}
