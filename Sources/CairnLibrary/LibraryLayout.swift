import CairnCore
import Foundation

/// Where everything lives inside a library folder.
public struct LibraryLayout: Sendable {
    public let root: String

    public init(root: String) {
        // Keep paths canonical so two spellings of one library share one lock and one catalog.
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    // Every name in a library, spelled here once.
    public static let catalogFileName = "catalog.sqlite"
    package static let originalsFolderName = "originals"
    package static let derivedFolderName = "derived"
    package static let sidecarsFolderName = "sidecars"
    package static let trashFolderName = "trash"
    package static let temporaryFolderName = "tmp"
    package static let quarantineFolderName = "quarantine"
    package static let runLogFolderName = "runs"
    package static let journalFileName = "journal.jsonl"
    package static let lockFileName = ".cairn.lock"
    package static let crashEvidenceFileName = ".crash-evidence"
    package static let identityFileName = ".cairn-library-id"
    package static let catalogMarkerFileName = ".cairn-catalog"
    package static let storeMarkerFileName = ".cairn-store"
    package static let tapesFolderName = "tapes"
    /// What a run keeps to go faster next time, and may lose: the source archives' listings (`archives/`).
    package static let cacheFolderName = "cache"
    package static let tapeClipsFolderName = ".clips"

    public var catalogPath: String { root + "/" + Self.catalogFileName }
    public var originalsDirectory: String { root + "/" + Self.originalsFolderName }
    public var derivedDirectory: String { root + "/" + Self.derivedFolderName }
    /// Work in progress; emptied at the start of every run (under the library lock).
    public var temporaryDirectory: String { root + "/" + Self.temporaryFolderName }
    /// The listings of the sources' archives (`--archives read`), kept between runs.
    public var archiveListingsDirectory: String { root + "/" + Self.cacheFolderName + "/archives" }

    /// Where a file on its way to `finalRelativePath` is written: `tmp/ab/` for a file bound for a content-addressed
    /// folder `…/ab/`, `tmp/` otherwise. Creating a file and renaming it away lock the folder they leave: with one
    /// `tmp/` for every lane, an import of small files queued on that one folder's lock; 256 folders spread the
    /// locks as the destinations are spread.
    public func temporaryDirectory(forFinal finalRelativePath: String) -> String {
        // The component before the last, found by bytes (three temporaries a file come through here).
        let slash = UInt8(ascii: "/")
        guard let last = finalRelativePath.utf8.lastIndex(of: slash) else { return temporaryDirectory }
        let folder = finalRelativePath[..<last]
        let shard = folder.utf8.lastIndex(of: slash).map { folder[folder.utf8.index(after: $0)...] } ?? folder
        guard shard.utf8.count == 2, shard.utf8.allSatisfy({ Checksum.nibble($0) != nil }) else { return temporaryDirectory }
        return temporaryDirectory + "/" + shard
    }
    /// Damaged originals found at their content address, set aside and never emptied by cairn.
    public var quarantineDirectory: String { root + "/" + Self.quarantineFolderName }
    public var runLogDirectory: String { root + "/" + Self.runLogFolderName }
    public var lockPath: String { root + "/" + Self.lockFileName }
    /// The library's identity in a shared work queue (a UUID, written by the first import that uses a queue): the
    /// same library whichever path a host mounts it at.
    public var identityPath: String { root + "/" + Self.identityFileName }
    /// Where a library whose catalog is in PostgreSQL says so (the database's URL, without its password): written
    /// by the first `import --catalog`, read by every command that would otherwise open the SQLite catalog.
    public var catalogMarkerPath: String { root + "/" + Self.catalogMarkerFileName }
    /// The PostgreSQL catalog this library's marker names, nil for a library whose catalog is its SQLite file.
    public var postgresCatalogNamed: String? { Self.marker(at: catalogMarkerPath) }
    /// Where a library whose files live in an object store says which (`s3://bucket/prefix`, no secret): written
    /// by its first `import --store`, read by every command that would otherwise look for its files in the folder.
    public var storeMarkerPath: String { root + "/" + Self.storeMarkerFileName }
    /// The store this library's marker names, nil for a library whose files are in its folder.
    public var recordedStore: String? { Self.marker(at: storeMarkerPath) }

    /// The text of the marker file at `path`; nil when there is none, or it says nothing.
    static func marker(at path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Writes `text` as the marker file at `path`, durably: a kill leaves the marker that was there or the new one.
    package static func writeMarker(_ text: String, at path: String) throws {
        let temporary = path + ".\(getpid()).new"
        try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: temporary))
        try FileSystem.syncFile(temporary)
        try FileSystem.renameDurably(temporary, to: path)
    }
    /// Every tape, a folder each (`tapes/NAME/`: its playlist, record and single file).
    public var tapesDirectory: String { root + "/" + Self.tapesFolderName }
    /// Tape clips, a folder each named by the clip's content and the tape format, shared by every tape: a clip
    /// is encoded once whichever tapes show it and however they are reordered. Hidden, so no tape name meets it.
    public var tapeClipsDirectory: String { tapesDirectory + "/" + Self.tapeClipsFolderName }
    /// A line left by a worker that faulted as it died (`CrashEvidence`); empty otherwise.
    public var crashEvidencePath: String { root + "/" + Self.crashEvidenceFileName }

    /// Whether a library's catalog exists at `root` (something was imported there), in SQLite or in PostgreSQL.
    public static func holdsLibrary(_ root: String) -> Bool {
        let layout = LibraryLayout(root: root)
        return FileManager.default.fileExists(atPath: layout.catalogPath)
            || FileManager.default.fileExists(atPath: layout.catalogMarkerPath)
    }

    /// `originals/ab/<sha1>.<ext>`: content-addressed, written once. One level of 256 folders: a million originals
    /// make some 3,900 a folder, which ext4's hashed directories index. (Libraries made before kept
    /// `originals/ab/cd/`, 65,536 folders, nearly one new folder a file for the first 100,000: an import of small
    /// files spent a twentieth of its CPU in `mkdir`. Their originals stay where the catalog says they are.)
    public func originalRelativePath(_ checksum: Checksum, fileExtension: String) -> String {
        Self.contentAddressed(in: Self.originalsFolderName, checksum, fileExtension: fileExtension)
    }

    /// `sidecars/ab/<sha1>.<ext>`, as for originals.
    public func sidecarRelativePath(_ checksum: Checksum, fileExtension: String) -> String {
        Self.contentAddressed(in: Self.sidecarsFolderName, checksum, fileExtension: fileExtension)
    }

    private static func contentAddressed(in folder: String, _ checksum: Checksum, fileExtension: String) -> String {
        let hex = checksum.hex
        let name = fileExtension.isEmpty ? hex : "\(hex).\(fileExtension)"
        return "\(folder)/\(hex.prefix(2))/\(name)"
    }

    /// `derived/ab/<sha1>-<suffix>`, e.g. `-thumb.webp`, `-preview.jpg`, `-clip.mp4`.
    public func derivedRelativePath(_ checksum: Checksum, suffix: String) -> String {
        let hex = checksum.hex
        return "\(Self.derivedFolderName)/\(hex.prefix(2))/\(hex)-\(suffix)"
    }

    public func absolute(_ relativePath: String) -> String { root + "/" + relativePath }

    /// `$CAIRN_LIBRARY`, else `$XDG_DATA_HOME/cairn/library`, else `~/.local/share/cairn/library`.
    public static func defaultRoot(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit = environment["CAIRN_LIBRARY"], !explicit.isEmpty { return explicit }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/cairn/library" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/share/cairn/library"
    }
}
