import CairnCore
import Foundation
import ImmichAPI
import OpenAPIRuntime
#if canImport(Glibc)
import Glibc
#endif

extension ImmichDouble {
    func uploadAsset(_ input: Operations.UploadAsset.Input) async throws -> Operations.UploadAsset.Output {
        let user = try RequestScope.requireUser()
        // Immich answers a known checksum header before reading the body: the client saves the upload.
        if let header = input.headers.xImmichChecksum, let digest = ChecksumText.digest(header),
           let found = await store.existing(owner: user.id, digest: digest) {
            RequestScope.traffic?.markBodyUnread()
            return .ok(.init(body: .json(.init(id: found.id, status: .duplicate))))
        }
        guard case .multipartForm(let parts) = input.body else { throw ImmichError.badRequest("Expected multipart") }

        let staging = store.files.stagingURL()
        defer { try? FileManager.default.removeItem(at: staging) }
        // 3.1 refuses an empty file part, sidecar included; 3.0 keeps it (`middleware/file-upload.interceptor.ts`
        // `_handleFile`: `if (size === 0) callback(new BadRequestException('File is empty'))`, from v3.1.0).
        var form = UploadForm(refusesEmptyFiles: (version.major, version.minor) >= (3, 1))
        do {
            for try await part in parts { try await form.take(part, staging: staging) }
        } catch let error as ImmichError {
            throw error
        } catch {
            // The stubs' multipart checks (a missing or repeated part, a bad part header) fail while the parts
            // stream in: Immich answers those as the bad request they are.
            throw ImmichError.validation([String(describing: error)])
        }
        if let refusal = form.refusal { throw refusal }
        let fields = try form.validated()
        if let video = fields.livePhotoVideoId, let problem = await store.livePhotoProblem(video, owner: user.id) {
            throw ImmichError.validation([problem])
        }
        guard let file = form.file else { throw ImmichError.validation(["assetData is required"]) }
        let id = UUID().uuidString.lowercased()
        let name = fields.filename ?? file.filename ?? "unnamed"
        let now = now()
        let asset = Asset(
            id: id, ownerId: user.id, checksum: file.digest, originalFileName: name,
            fileCreatedAt: fields.fileCreatedAt, fileModifiedAt: fields.fileModifiedAt, duration: fields.duration,
            visibility: fields.visibility ?? .timeline, livePhotoVideoId: fields.livePhotoVideoId,
            sidecarBytes: form.sidecarBytes, isFavorite: fields.isFavorite ?? false, bytes: file.bytes,
            type: Asset.type(forFileName: name), createdAt: now, updatedAt: now,
            path: store.files.path(owner: user.id, id: id))
        switch try await store.createOrDuplicate(asset, staged: staging) {
        case .created(let kept): return .created(.init(body: .json(.init(id: kept.id, status: .created))))
        case .duplicate(let found): return .ok(.init(body: .json(.init(id: found.id, status: .duplicate))))
        }
    }

    func checkBulkUpload(_ input: Operations.CheckBulkUpload.Input) async throws -> Operations.CheckBulkUpload.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        var results: [Components.Schemas.AssetBulkUploadCheckResult] = []
        for item in dto.assets {
            if let digest = ChecksumText.digest(item.checksum), let found = await store.existing(owner: user.id, digest: digest) {
                results.append(.init(action: .reject, assetId: found.id, id: item.id, isTrashed: found.isTrashed,
                                     reason: .duplicate))
            } else {
                results.append(.init(action: .accept, id: item.id))
            }
        }
        return .ok(.init(body: .json(.init(results: results))))
    }
}

/// The parts of one upload as they stream in: the file goes to disk with its SHA1, the text fields are kept raw
/// until the whole form is there (clients send them in any order).
struct UploadForm {
    struct File {
        var filename: String?
        var bytes: Int
        var digest: [UInt8]
    }

    struct Fields {
        var fileCreatedAt: Date
        var fileModifiedAt: Date
        var duration: Int?
        var filename: String?
        var isFavorite: Bool?
        var livePhotoVideoId: String?
        var visibility: Components.Schemas.AssetVisibility?
    }

    /// Whether an empty file part fails the upload (Immich 3.1 and later).
    let refusesEmptyFiles: Bool
    var file: File?
    var sidecarBytes = 0
    /// The file filter's refusal of a part, answered for the whole upload.
    var refusal: ImmichError?
    var text: [String: String] = [:]

    mutating func take(_ part: Components.Schemas.AssetMediaCreateDto, staging: URL) async throws {
        let traffic = RequestScope.traffic
        switch part {
        case .assetData(let file):
            // `canUploadFile`'s ASSET_DATA case: an image or a video by the judged name, else the whole upload fails.
            let judged = ImmichMediaTypes.judgedName(fieldsSoFar: text, partFilename: file.filename)
            guard ImmichMediaTypes.isAsset(judged) else { return try await refuse(file.payload.body, judged) }
            let (bytes, digest) = try await Self.stream(file.payload.body, to: staging)
            self.file = File(filename: file.filename, bytes: bytes, digest: digest)
            traffic?.addFilePart(name: "assetData", filename: file.filename, bytes: bytes)
            if bytes == 0, refusesEmptyFiles { refusal = refusal ?? ImmichError.badRequest("File is empty") }
        case .sidecarData(let sidecar):
            // `canUploadFile`'s SIDECAR_DATA case: `.xmp` by the judged name, which is the `filename` field's when
            // that field came first: a sidecar after `filename=IMG_1.jpg` is judged as a JPEG and refused.
            let judged = ImmichMediaTypes.judgedName(fieldsSoFar: text, partFilename: sidecar.filename)
            guard ImmichMediaTypes.isSidecar(judged) else { return try await refuse(sidecar.payload.body, judged) }
            var count = 0
            for try await chunk in sidecar.payload.body { count += chunk.count }
            sidecarBytes = count
            traffic?.addFilePart(name: "sidecarData", filename: sidecar.filename, bytes: count)
            if count == 0, refusesEmptyFiles { refusal = refusal ?? ImmichError.badRequest("File is empty") }
        case .fileCreatedAt(let part): try await keep("fileCreatedAt", part.payload.body)
        case .fileModifiedAt(let part): try await keep("fileModifiedAt", part.payload.body)
        case .duration(let part): try await keep("duration", part.payload.body)
        case .filename(let part): try await keep("filename", part.payload.body)
        case .isFavorite(let part): try await keep("isFavorite", part.payload.body)
        case .livePhotoVideoId(let part): try await keep("livePhotoVideoId", part.payload.body)
        case .visibility(let part): try await keep("visibility", part.payload.body)
        case .metadata(let part):
            // Immich stores these key/value items; the double has no use for them but logs them.
            let json = (try? JSONEncoder().encode(part.payload.body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            traffic?.addTextPart(name: "metadata", value: json, contentType: "application/json")
        case .undocumented(let raw):
            for try await _ in raw.body {}
        }
    }

    /// A part the file filter refused: multer drains the rest of the request before the 400 goes out, so the
    /// refusal is kept and answered once the form has been read (the first refusal wins).
    private mutating func refuse(_ body: HTTPBody, _ judged: String) async throws {
        for try await _ in body {}
        refusal = refusal ?? ImmichError.badRequest("Unsupported file type \(judged)")
    }

    private mutating func keep(_ name: String, _ body: HTTPBody) async throws {
        let value = try await String(collecting: body, upTo: 1 << 20)
        text[name] = value
        RequestScope.traffic?.addTextPart(name: name, value: value, contentType: nil)
    }

    /// The fields checked as Immich's DTO validation would, every problem listed (Zod-style).
    func validated() throws -> Fields {
        var problems: [String] = []
        func date(_ name: String) -> Date {
            guard let text = text[name] else { problems.append("\(name): Required"); return Date(timeIntervalSince1970: 0) }
            guard let date = DateText.parse(text) else {
                problems.append("\(name): Invalid ISO datetime")
                return Date(timeIntervalSince1970: 0)
            }
            return date
        }
        var fields = Fields(fileCreatedAt: date("fileCreatedAt"), fileModifiedAt: date("fileModifiedAt"))
        if let duration = text["duration"] {
            if let ms = Int(duration), ms >= 0 { fields.duration = ms } else { problems.append("duration: Expected integer") }
        }
        if let favorite = text["isFavorite"] {
            switch favorite.lowercased() {
            case "true": fields.isFavorite = true
            case "false": fields.isFavorite = false
            default: problems.append("isFavorite: Expected boolean")
            }
        }
        if let visibility = text["visibility"] {
            if let value = Components.Schemas.AssetVisibility(rawValue: visibility) { fields.visibility = value } else {
                problems.append("visibility: Invalid enum value")
            }
        }
        if let video = text["livePhotoVideoId"] {
            if UUID(uuidString: video) != nil { fields.livePhotoVideoId = video.lowercased() } else {
                problems.append("livePhotoVideoId: Invalid UUID")
            }
        }
        if let name = text["filename"], !name.isEmpty { fields.filename = name }
        if file == nil { problems.append("assetData: Required") }
        guard problems.isEmpty else { throw ImmichError.validation(problems) }
        return fields
    }

    /// Writes the part to `url` as it arrives, hashing on the way: a big video never sits in memory.
    static func stream(_ body: HTTPBody, to url: URL) async throws -> (Int, [UInt8]) {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw ImmichError.other(status: .internalServerError, messages: ["cannot create \(url.path)"]) }
        defer { close(fd) }
        let sha = SHA1()
        var total = 0
        for try await chunk in body {
            sha.update(chunk)
            total += chunk.count
            try chunk.withUnsafeBytes { raw in
                do throws(SystemCallError) { try writeFully(fd, raw, path: url.path) } catch {
                    throw ImmichError.other(status: .internalServerError, messages: ["write failed: \(error.reason)"])
                }
            }
        }
        return (total, sha.finish())
    }
}
