import CairnCore

/// The name a file goes to Immich under. Immich types a file by its name's extension alone
/// (`server/src/utils/mime-types.ts`), and refuses one it cannot type: a file cairn recognised by its content but
/// whose name has no extension, or one Immich does not list (`.3g2`, Samsung's `.MP`), is sent under a name with an
/// extension Immich takes, chosen from the container cairn read in it. The catalog keeps the file's own name.
enum ImmichUploadName {
    /// `name` itself when `accepted` (lowercased, dot included) holds its extension or is empty (the server did not
    /// say); else `name` with an extension from `container`; nil when no extension Immich takes fits.
    static func name(for name: String, kind: MediaKind, container: String?, accepted: Set<String>) -> String? {
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let current = dot.map { name[$0...].lowercased() } ?? ""
        guard !accepted.isEmpty, !accepted.contains(current) else { return name }
        guard let wanted = container.flatMap({ fittingExtension(container: $0, kind: kind) }), accepted.contains(wanted)
        else { return nil }
        guard let dot else { return name + wanted }
        let old = name[name.index(after: dot)...]
        let upper = old.contains { $0.isLetter } && old == old.uppercased()
        return name[..<dot] + (upper ? wanted.uppercased() : wanted)
    }

    /// The extension a file of this container (FFmpeg's demuxer names, e.g. "mov,mp4,m4a,3gp,3g2,mj2") and kind takes.
    static func fittingExtension(container: String, kind: MediaKind) -> String? {
        let names = Set(container.split(separator: ",").map { $0.replacingOccurrences(of: "_pipe", with: "") })
        switch kind {
        case .photo:
            for (demuxer, ext) in [("jpeg", ".jpg"), ("mjpeg", ".jpg"), ("png", ".png"), ("webp", ".webp"), ("gif", ".gif"),
                                   ("tiff", ".tif"), ("heif", ".heic"), ("heic", ".heic"), ("avif", ".avif"),
                                   ("jpegxl", ".jxl"), ("jxl", ".jxl"), ("bmp", ".bmp")] where names.contains(demuxer) {
                return ext
            }
        case .video:
            for (demuxer, ext) in [("mp4", ".mp4"), ("mov", ".mov"), ("matroska", ".mkv"), ("webm", ".webm"), ("avi", ".avi"),
                                   ("mpegts", ".mts"), ("mpeg", ".mpg")] where names.contains(demuxer) {
                return ext
            }
        case .other:
            break
        }
        return nil
    }
}
