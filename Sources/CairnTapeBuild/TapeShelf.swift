import CairnLibrary
import CairnMedia
import CairnTape
import Foundation

/// A library's tapes on disk: `tapes/NAME/` holds a tape's playlist, record (`tape.json`) and single file;
/// `tapes/.clips/<key>/` holds each clip's segments, shared by every tape that shows it.
public struct TapeShelf: Sendable {
    public let layout: LibraryLayout

    public static let playlistFileName = "playlist.m3u8"
    public static let manifestFileName = "tape.json"
    public static let movieFileName = "tape.mp4"

    public init(layout: LibraryLayout) { self.layout = layout }

    /// A tape's name becomes a folder name: no slash, not hidden, printable, at most 100 characters.
    public static func validate(name: String) throws(TapeSelectionError) {
        guard !name.isEmpty, name.count <= 100, !name.hasPrefix("."), !name.contains("/"),
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw TapeSelectionError(description: "\(name.debugDescription): a tape's name is 1 to 100 printable characters, "
                                     + "with no slash and not starting with a dot")
        }
    }

    public func folder(_ name: String) -> String { layout.tapesDirectory + "/" + name }
    public func playlistPath(_ name: String) -> String { folder(name) + "/" + Self.playlistFileName }
    public func manifestPath(_ name: String) -> String { folder(name) + "/" + Self.manifestFileName }
    public func moviePath(_ name: String) -> String { folder(name) + "/" + Self.movieFileName }
    func clipFolder(_ key: String) -> String { layout.tapeClipsDirectory + "/" + key }
    /// The clip's folder as a tape's playlist reaches it: `tapes/NAME/` and `tapes/.clips/` are siblings.
    func clipURIPrefix(_ key: String) -> String { "../\(LibraryLayout.tapeClipsFolderName)/\(key)" }

    /// The tapes, by name.
    public func names() -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: layout.tapesDirectory)) ?? []
        return entries.filter { !$0.hasPrefix(".") && FileManager.default.fileExists(atPath: manifestPath($0)) }.sorted()
    }

    /// The tape's record, or nil when there is no such tape.
    public func manifest(_ name: String) throws -> TapeManifest? {
        guard let data = FileManager.default.contents(atPath: manifestPath(name)) else { return nil }
        return try TapeManifest(jsonData: data)
    }

    func write(_ manifest: TapeManifest) throws {
        var stamped = manifest
        stamped.updated = Date()
        try stamped.jsonData().write(to: URL(fileURLWithPath: manifestPath(manifest.name)), options: .atomic)
    }

    /// Replaces the playlist whole (a rename), so a player never reads half a version of it.
    func writePlaylist(_ text: String, of name: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: playlistPath(name)), options: .atomic)
    }

    /// The segment durations of the whole clip named `key`, or nil when it is not made (or only in part).
    func completedClip(_ key: String) -> [Double]? { TapeClipRequest.completedSegments(in: clipFolder(key)) }

    /// Removes a tape, then every clip folder no remaining tape shows. Returns how many clip folders went.
    public func remove(_ name: String) throws -> Int {
        guard try manifest(name) != nil else {
            throw TapeSelectionError(description: "\(name): no such tape in \(layout.tapesDirectory)")
        }
        try FileManager.default.removeItem(atPath: folder(name))
        return try pruneClips()
    }

    /// The keys of the clips some tape shows.
    public func shownClips() throws -> Set<String> {
        var kept = Set<String>()
        for name in names() {
            guard let manifest = try manifest(name) else { continue }
            kept.formUnion(manifest.clips.map(\.folderName))
        }
        return kept
    }

    /// Deletes clip folders that no tape's record names (a removed tape's, or a changed format's).
    func pruneClips() throws -> Int {
        let kept = try shownClips()
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: layout.tapeClipsDirectory)) ?? []
        var removed = 0
        for key in folders where !kept.contains(key) {
            try FileManager.default.removeItem(atPath: clipFolder(key))
            removed += 1
        }
        return removed
    }
}
