/// Which media file a sidecar describes, from names alone (pure; the worker reads a Takeout JSON's title).
///
/// - `IMG_1234.xmp` or `IMG_1234.JPG.xmp`, and `IMG_1234.AAE` (an iPhone edit): the media in the same folder
///   with that name or base name (the still, when a Live Photo's still and movie share it).
/// - Google Takeout: `IMG.jpg.json`, `IMG.jpg.supplemental-metadata.json` (also cut short, or localized:
///   `IMG.jpg.métadonnées.json`), and `IMG.jpg(1).json` for `IMG(1).jpg`; else the JSON's `title`.
public enum SidecarMatcher {
    public enum Kind: String, Sendable {
        case xmp, aae, takeout
    }

    /// Sidecars are small; anything larger is not one.
    public static let maxBytes = 4 << 20

    static let extensions: Set<String> = ["xmp", "aae", "json"]

    public static func isSidecar(name: String) -> Bool {
        extensions.contains(MediaClassifier.fileExtension(of: name).lowercased())
    }

    public static func kind(of name: String) -> Kind? {
        switch MediaClassifier.fileExtension(of: name).lowercased() {
        case "xmp": return .xmp
        case "aae": return .aae
        case "json": return .takeout
        default: return nil
        }
    }

    /// The media of a scan, indexed by folder, name and base name: built once, so matching stays linear in the
    /// number of files even for a Takeout folder of tens of thousands.
    public struct Index: Sendable {
        var byName: [String: [String: String]] = [:]
        var byStem: [String: [String: [String]]] = [:]

        public init(_ mediaPaths: [String]) {
            for path in mediaPaths.sorted() {
                let (folder, name) = SidecarMatcher.split(path)
                byName[folder, default: [:]][name.lowercased()] = byName[folder]?[name.lowercased()] ?? path
                byStem[folder, default: [:]][SidecarMatcher.stem(name).lowercased(), default: []].append(path)
            }
        }
    }

    /// The relative path of the media `sidecar` describes, among `mediaPaths` (relative paths), or nil.
    /// `title` is a Takeout JSON's `title` field, tried last.
    public static func media(for sidecar: String, among mediaPaths: [String], title: String? = nil) -> String? {
        media(for: sidecar, in: Index(mediaPaths), title: title)
    }

    public static func media(for sidecar: String, in index: Index, title: String? = nil) -> String? {
        let (folder, name) = split(sidecar)
        guard let byName = index.byName[folder], let kind = kind(of: name) else { return nil }
        var base = String(name.dropLast(MediaClassifier.fileExtension(of: name).count + 1))
        if kind == .takeout {
            // "IMG.jpg(1)" names "IMG(1).jpg".
            if let open = base.lastIndex(of: "("), base.hasSuffix(")"), open > base.startIndex {
                let counter = base[open...]
                let head = base[..<open]
                let ext = MediaClassifier.fileExtension(of: head)
                if !ext.isEmpty {
                    base = String(head.dropLast(ext.count + 1)) + counter + "." + ext
                }
            }
            // "IMG.jpg.supplemental-metadata" (or cut short, or localized): keep up to the media extension.
            let parts = base.split(separator: ".", omittingEmptySubsequences: false)
            if let cut = parts.indices.dropFirst().first(where: {
                MediaClassifier.kind(forExtension: String(parts[$0])) != .other
            }) {
                base = parts[...cut].joined(separator: ".")
            }
        }
        if let exact = byName[base.lowercased()] { return exact }
        if kind != .takeout, let stems = index.byStem[folder]?[base.lowercased()] {
            // "IMG_1234.xmp": any media with that base name; the still first (a Live Photo shares its name).
            if let still = stems.first(where: { MediaClassifier.kind(forExtension: MediaClassifier.fileExtension(of: $0)) == .photo }) {
                return still
            }
            if let any = stems.first { return any }
        }
        if let title, let match = byName[title.lowercased()] { return match }
        return nil
    }

    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }

    static func stem(_ name: String) -> String {
        let ext = MediaClassifier.fileExtension(of: name)
        return ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
    }
}
