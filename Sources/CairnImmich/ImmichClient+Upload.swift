import CairnCore
import Foundation
import ImmichAPI
import NIOCore
import NIOFileSystem
import OpenAPIRuntime

/// One file to upload, with everything Immich v3 takes beside its bytes.
public struct ImmichUploadFile: Sendable {
    public var path: String
    public var byteCount: Int64
    public var checksum: Checksum
    /// The name Immich shows (`originalFileName`).
    public var filename: String
    /// ISO 8601 with an offset (`Timestamp.withMilliseconds`): Immich v3 refuses naive times.
    public var createdAt: String
    public var modifiedAt: String
    /// A video's length in whole milliseconds (an integer since v3).
    public var durationMilliseconds: Int?
    /// A Live Photo's movie: kept out of the timeline, shown through its still.
    public var hidden: Bool
    /// The still of a Live Photo names its movie's asset.
    public var livePhotoVideoID: String?
    /// An XMP sidecar delivered with the file.
    public var sidecarPath: String?

    public init(path: String, byteCount: Int64, checksum: Checksum, filename: String, createdAt: String,
                modifiedAt: String, durationMilliseconds: Int? = nil, hidden: Bool = false,
                livePhotoVideoID: String? = nil, sidecarPath: String? = nil) {
        self.path = path
        self.byteCount = byteCount
        self.checksum = checksum
        self.filename = filename
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.durationMilliseconds = durationMilliseconds
        self.hidden = hidden
        self.livePhotoVideoID = livePhotoVideoID
        self.sidecarPath = sidecarPath
    }
}

public enum ImmichUploadResult: Sendable, Hashable {
    /// The server made a new asset of the bytes (or a try whose answer was lost did: settled by checksum).
    case created(assetID: String)
    /// The server already had the bytes.
    case duplicate(assetID: String)

    public var assetID: String {
        switch self {
        case .created(let id), .duplicate(let id): return id
        }
    }
}

extension ImmichClient {
    /// Bytes read from disk per chunk of an upload's body.
    static let uploadChunk = ByteCount.mebibytes(1)

    /// Uploads one file, its body streamed from disk. A try whose connection dropped is settled by asking the
    /// server for the checksum: the file counts as uploaded if it is there, and only otherwise is sent again.
    public func upload(_ file: ImmichUploadFile) async throws(ImmichFailure) -> ImmichUploadResult {
        try await withRetries("upload", settle: { () throws(ImmichFailure) in
            guard let id = try await self.presence(of: [file.checksum])[file.checksum]?.assetID else { return nil }
            return .created(assetID: id)
        }) { () throws(ImmichFailure) in
            try await uploadOnce(file)
        }
    }

    private func uploadOnce(_ file: ImmichUploadFile) async throws(ImmichFailure) -> ImmichUploadResult {
        let output: Operations.UploadAsset.Output
        do {
            output = try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(file.path)) { handle in
                let sidecar = try file.sidecarPath.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
                let body = HTTPBody(
                    handle.readChunks(in: 0..<file.byteCount, chunkLength: Self.uploadChunk)
                        .map { ArraySlice($0.readableBytesView) },
                    length: .known(file.byteCount), iterationBehavior: .single)
                return try await uploads.uploadAsset(
                    headers: .init(xImmichChecksum: file.checksum.hex),
                    body: .multipartForm(MultipartBody(Self.parts(of: file, body: body, sidecar: sidecar))))
            }
        } catch let error as FileSystemError {
            // The source file itself: gone or unreadable since it was hashed. Not Immich's failure, not retried.
            throw ImmichFailure(kind: .permanent, operation: "upload",
                                message: "cannot read \(file.path): \(error.code)",
                                category: Self.category(of: error.code))
        } catch {
            throw Self.transportFailure(error, operation: "upload")
        }
        switch output {
        case .created(let created):
            return .created(assetID: try Self.json("upload") { try created.body.json.id })
        case .ok(let ok):
            return .duplicate(assetID: try Self.json("upload") { try ok.body.json.id })
        case .undocumented(let status, let payload):
            throw await Self.undocumented(status, payload, operation: "upload")
        }
    }

    /// A source file that cannot be read, by what the file system said.
    static func category(of code: FileSystemError.Code) -> FailureCategory {
        switch code {
        case .notFound: return .notFound
        case .permissionDenied: return .permission
        default: return .io
        }
    }

    /// The sidecar first, then the form's fields, and the file last, so a server can refuse early without reading
    /// the bytes. Immich judges each file part as it arrives by the `filename` field when one came before it, else
    /// by the part's own name (`canUploadFile`): a sidecar sent after `filename=IMG_1.jpg` is judged as a JPEG, is
    /// not a sidecar, and the whole upload is refused. Before that field, it is judged as the `.xmp` it is.
    static func parts(of file: ImmichUploadFile, body: HTTPBody, sidecar: Data?)
        -> [Components.Schemas.AssetMediaCreateDto] {
        var parts: [Components.Schemas.AssetMediaCreateDto] = []
        if let sidecar {
            parts.append(.sidecarData(.init(payload: .init(body: HTTPBody(sidecar)), filename: file.filename + ".xmp")))
        }
        parts += [
            .fileCreatedAt(.init(payload: .init(body: HTTPBody(file.createdAt)))),
            .fileModifiedAt(.init(payload: .init(body: HTTPBody(file.modifiedAt)))),
            .filename(.init(payload: .init(body: HTTPBody(file.filename)))),
        ]
        if let milliseconds = file.durationMilliseconds {
            parts.append(.duration(.init(payload: .init(body: HTTPBody(String(milliseconds))))))
        }
        if file.hidden { parts.append(.visibility(.init(payload: .init(body: HTTPBody("hidden"))))) }
        if let video = file.livePhotoVideoID {
            parts.append(.livePhotoVideoId(.init(payload: .init(body: HTTPBody(video)))))
        }
        parts.append(.assetData(.init(payload: .init(body: body), filename: file.filename)))
        return parts
    }
}
