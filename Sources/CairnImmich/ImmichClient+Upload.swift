import CairnCore
import Foundation
import ImmichAPI
import NIOCore
import NIOFileSystem
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

/// One file to upload, with everything Immich v3 takes beside its bytes.
public struct ImmichUploadFile: Sendable {
    /// Where bytes to send are: a file, read as it is sent, or bytes held in memory (an archive's entry, read out of
    /// it once).
    public enum Content: Sendable {
        case file(String)
        case bytes([UInt8])

        /// The file's path, or what stands for bytes in memory, for messages.
        public var description: String {
            switch self {
            case .file(let path): path
            case .bytes(let bytes): "\(bytes.count) bytes in memory"
            }
        }
    }

    public var content: Content
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
    public var sidecar: Content?

    public init(content: Content, byteCount: Int64, checksum: Checksum, filename: String, createdAt: String,
                modifiedAt: String, durationMilliseconds: Int? = nil, hidden: Bool = false,
                livePhotoVideoID: String? = nil, sidecar: Content? = nil) {
        self.content = content
        self.byteCount = byteCount
        self.checksum = checksum
        self.filename = filename
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.durationMilliseconds = durationMilliseconds
        self.hidden = hidden
        self.livePhotoVideoID = livePhotoVideoID
        self.sidecar = sidecar
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
        let response: HTTPResponse, answer: HTTPBody?
        do {
            let sidecar: Data? = switch file.sidecar {
            case .file(let path): try Data(contentsOf: URL(fileURLWithPath: path))
            case .bytes(let bytes): Data(bytes)
            case nil: nil
            }
            switch file.content {
            case .file(let path):
                (response, answer) = try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { handle in
                    let chunks = handle.readChunks(in: 0..<file.byteCount, chunkLength: Self.uploadChunk)
                        .map { ArraySlice($0.readableBytesView) }
                    return try await send(file, sidecar: sidecar, chunks: chunks)
                }
            case .bytes(let bytes):
                (response, answer) = try await send(file, sidecar: sidecar,
                                                    chunks: MemoryChunks(bytes: bytes, length: Int(Self.uploadChunk.bytes)))
            }
        } catch let error as FileSystemError {
            // The source file itself: gone or unreadable since it was hashed. Not Immich's failure, not retried.
            throw ImmichFailure(kind: .permanent, operation: "upload",
                                message: "cannot read \(file.content.description): \(error.code)",
                                category: Self.category(of: error.code))
        } catch let failure as ImmichFailure {
            throw failure
        } catch {
            throw Self.transportFailure(error, operation: "upload")
        }
        guard response.status.code == 200 || response.status.code == 201 else {
            // Classified as every other undocumented answer is.
            throw await undocumented(response.status.code,
                                          UndocumentedPayload(headerFields: response.headerFields, body: answer),
                                          operation: "upload")
        }
        let data: Data
        do { data = try await Data(collecting: answer ?? HTTPBody(), upTo: 64 * 1024) } catch {
            throw Self.transportFailure(error, operation: "upload")
        }
        let created = try Self.json("upload") {
            try JSONDecoder().decode(Components.Schemas.AssetMediaResponseDto.self, from: data)
        }
        return response.status.code == 201 ? .created(assetID: created.id) : .duplicate(assetID: created.id)
    }

    /// Sends one upload whose file part is `chunks`, raced against a body that stopped moving (the server no longer
    /// reads it).
    private func send<Chunks: AsyncSequence & Sendable>(_ file: ImmichUploadFile, sidecar: Data?, chunks: Chunks)
        async throws -> (HTTPResponse, HTTPBody?) where Chunks.Element == ArraySlice<UInt8>
    {
        let framing = UploadFraming(file: file, sidecar: sidecar)
        let progress = BodyProgress()
        let body = HTTPBody(FramedBody(framing: framing, file: chunks, progress: progress),
                            length: .known(framing.length(fileBytes: file.byteCount)), iterationBehavior: .single)
        var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/assets")
        request.headerFields[.contentType] = framing.contentType
        request.headerFields[.accept] = "application/json"
        request.headerFields[Self.checksumHeader] = file.checksum.hex
        request.headerFields[APIKeyMiddleware.header] = key.value
        let (uploads, endpoint, idle, sending) = (self.uploads, self.endpoint, timeouts.idleWrite, request)
        return try await withThrowingTaskGroup(of: (HTTPResponse, HTTPBody?)?.self) { group in
            group.addTask {
                try await uploads.send(sending, body: body, baseURL: endpoint.apiURL, operationID: "uploadAsset")
            }
            group.addTask {
                try await progress.stalled(after: idle)
                return nil
            }
            defer { group.cancelAll() }
            guard let sent = try await group.next(), let answer = sent else {
                throw ImmichFailure(kind: .retryable, operation: "upload",
                                    message: "the server stopped reading the upload (no progress for \(idle))",
                                    outcomeUnknown: true, category: .timeout)
            }
            return answer
        }
    }

    static let checksumHeader = HTTPField.Name("x-immich-checksum")!

    /// A source file that cannot be read, by what the file system said.
    static func category(of code: FileSystemError.Code) -> FailureCategory {
        switch code {
        case .notFound: return .notFound
        case .permissionDenied: return .permission
        default: return .io
        }
    }
}
