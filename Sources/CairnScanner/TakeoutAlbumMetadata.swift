import Foundation

/// A Google Takeout album folder's own metadata file: the album's title, description and date.
///
/// Google writes it beside the album's photos under a name localized with the account's language
/// (`metadata.json`, `métadonnées.json`, `metadatos.json`, `Metadaten.json`, ...), so it is told by its
/// content: a JSON object with a `title` and none of a photo's fields, named without a second dot (a photo's own
/// JSON is named after the photo: `IMG_1.jpg.json`). Older exports wrap the fields in `albumData`.
public struct TakeoutAlbumMetadata: Sendable, Equatable {
    /// Empty when Google left it empty: the album is then named by its folder.
    public var title: String
    public var description: String?
    /// The album's own date (Takeout's `date.timestamp`), not any photo's.
    public var date: Date?

    /// True when `name` (a file name, no folder) can be an album's metadata file.
    public static func isCandidate(name: String) -> Bool {
        let lowered = name.lowercased()
        guard lowered.hasSuffix(".json") else { return false }
        return !lowered.dropLast(5).contains(".")
    }

    /// Nil when `data` is not an album's metadata (not JSON, not an object, a photo's fields, no title).
    public init?(data: Data) {
        guard data.count <= SidecarMatcher.maxBytes,
              let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        let object = top["albumData"] as? [String: Any] ?? top
        guard object["photoTakenTime"] == nil,
              let title = object["title"] as? String else { return nil }
        self.title = title
        description = (object["description"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        if let date = object["date"] as? [String: Any],
           let seconds = (date["timestamp"] as? String).flatMap(Double.init) ?? date["timestamp"] as? Double, seconds > 0 {
            self.date = Date(timeIntervalSince1970: seconds)
        }
    }

    /// The album's name: its title, or its folder's name when the title is empty.
    public func name(folderName: String) -> String { title.isEmpty ? folderName : title }
}
