/// The file types Immich takes, by extension, and how it judges each file part of an upload.
///
/// Real server: `server/src/utils/mime-types.ts` (v3.0.3 `cd308ad93`; the lists are the same in v3.1.0): `image` is
/// `webSupportedImage` + `webUnsupportedImage` (which holds `raw`), `video` and `sidecar`; `isType` matches
/// `extname(filename).toLowerCase()`, the last extension only, so a name without one (or only a leading dot, in
/// 3.0) is no type at all.
enum ImmichMediaTypes {
    static let raw: [String] = [
        ".3fr", ".ari", ".arw", ".cap", ".cin", ".cr2", ".cr3", ".crw", ".dcr", ".dng", ".erf", ".fff", ".iiq", ".k25",
        ".kdc", ".mrw", ".nef", ".nrw", ".orf", ".ori", ".pef", ".psd", ".raf", ".raw", ".rw2", ".rwl", ".sr2", ".srf",
        ".srw", ".x3f",
    ]
    static let image: [String] = [".avif", ".bmp", ".gif", ".jpeg", ".jpg", ".png", ".webp"] + raw + [
        ".heic", ".heif", ".hif", ".insp", ".jp2", ".jpe", ".jxl", ".mpo", ".svg", ".tif", ".tiff",
    ]
    static let video: [String] = [
        ".3gp", ".3gpp", ".avi", ".flv", ".insv", ".m2t", ".m2ts", ".m4v", ".mkv", ".mov", ".mp4", ".mpe", ".mpeg",
        ".mpg", ".mts", ".mxf", ".ts", ".vob", ".webm", ".wmv",
    ]
    static let sidecar: [String] = [".xmp"]

    private static let images = Set(image), videos = Set(video), sidecars = Set(sidecar)

    /// Node's `path.extname`, lowercased: from the last dot of the last component, "" when the name has none or
    /// starts with its only dot.
    static func extensionName(_ name: String) -> String {
        let base = name.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? name
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return "" }
        return base[dot...].lowercased()
    }

    static func isAsset(_ name: String) -> Bool { isImage(name) || isVideo(name) }
    static func isImage(_ name: String) -> Bool { images.contains(extensionName(name)) }
    static func isVideo(_ name: String) -> Bool { videos.contains(extensionName(name)) }
    static func isSidecar(_ name: String) -> Bool { sidecars.contains(extensionName(name)) }

    /// Which name a file part is judged by, as it arrives. Real server: `server/src/services/asset-media.service.ts`
    /// `canUploadFile` (`const filename = body.filename || file.originalName`), called by multer's file filter
    /// (`server/src/middleware/file-upload.interceptor.ts` `fileFilter`, through `utils/asset.util.ts`
    /// `asUploadRequest`, which passes the live `request.body`). multer fills the body field by field as the parts
    /// stream in, so a `filename` field sent before a file part decides that part's judgement, sidecars included;
    /// one sent after it does not.
    static func judgedName(fieldsSoFar: [String: String], partFilename: String?) -> String {
        if let name = fieldsSoFar["filename"], !name.isEmpty { return name }
        return partFilename ?? ""
    }
}
