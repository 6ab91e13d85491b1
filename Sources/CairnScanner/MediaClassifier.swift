import CairnCore

/// Tells photos and videos from other files, by extension and by the first bytes of the file.
public enum MediaClassifier {
    static let photoExtensions: Set<String> = [
        "jpg", "jpeg", "jpe", "png", "heic", "heif", "webp", "gif", "tif", "tiff", "bmp", "avif", "jxl",
        "dng", "cr2", "cr3", "nef", "arw", "orf", "rw2", "raf", "srw", "pef",
    ]
    static let videoExtensions: Set<String> = [
        "mp4", "m4v", "mov", "avi", "mkv", "webm", "mts", "m2ts", "3gp", "3g2", "wmv", "mpg", "mpeg", "flv",
    ]

    /// The kind an extension (any case, without the dot) promises.
    public static func kind(forExtension fileExtension: String) -> MediaKind {
        let lowered = fileExtension.lowercased()
        if photoExtensions.contains(lowered) { return .photo }
        if videoExtensions.contains(lowered) { return .video }
        return .other
    }

    /// The kind a file's first bytes reveal, or nil when they match no format cairn knows.
    public static func kind(forHeader header: some Collection<UInt8>) -> MediaKind? {
        let bytes = Array(header.prefix(32))
        func matches(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { matches(Array(text.utf8), at: offset) }

        if matches([0xFF, 0xD8, 0xFF]) || matches([0x89, 0x50, 0x4E, 0x47]) || ascii("GIF8") || ascii("BM")
            || matches([0x49, 0x49, 0x2A, 0x00]) || matches([0x4D, 0x4D, 0x00, 0x2A])
            || (ascii("RIFF") && ascii("WEBP", at: 8)) || matches([0xFF, 0x0A])
        {
            return .photo
        }
        if ascii("ftyp", at: 4) {
            let brand = bytes.count >= 12 ? String(decoding: bytes[8..<12], as: UTF8.self) : ""
            return ["heic", "heix", "heim", "heis", "hevc", "mif1", "msf1", "avif", "avis"].contains(brand) ? .photo : .video
        }
        if ascii("moov", at: 4) || ascii("mdat", at: 4) || ascii("wide", at: 4) || (ascii("RIFF") && ascii("AVI ", at: 8))
            || matches([0x1A, 0x45, 0xDF, 0xA3]) || matches([0x00, 0x00, 0x01, 0xBA]) || ascii("FLV")
            || matches([0x30, 0x26, 0xB2, 0x75])
        {
            return .video
        }
        return nil
    }

    /// The extension of a file name without the dot, or "" when it has none.
    public static func fileExtension(of name: some StringProtocol) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }
}
