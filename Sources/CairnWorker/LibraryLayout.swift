import CairnCore
import Foundation

/// Where everything lives inside a library folder.
public struct LibraryLayout: Sendable {
    public let root: String

    public init(root: String) {
        // Keep paths canonical so two spellings of one library share one lock and one catalog.
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    public var catalogPath: String { root + "/catalog.sqlite" }
    public var originalsDirectory: String { root + "/originals" }
    public var derivedDirectory: String { root + "/derived" }
    public var trashDirectory: String { root + "/trash" }
    /// Work in progress; emptied at the start of every run (under the library lock).
    public var temporaryDirectory: String { root + "/tmp" }
    /// Damaged originals found at their content address, set aside and never emptied by cairn.
    public var quarantineDirectory: String { root + "/quarantine" }
    public var runLogDirectory: String { root + "/runs" }
    public var journalPath: String { root + "/journal.jsonl" }
    public var lockPath: String { root + "/.cairn.lock" }

    /// `originals/ab/cd/<sha1>.<ext>`: content-addressed, written once.
    public func originalRelativePath(_ checksum: Checksum, fileExtension: String) -> String {
        let hex = checksum.hex
        let name = fileExtension.isEmpty ? hex : "\(hex).\(fileExtension)"
        return "originals/\(hex.prefix(2))/\(hex.dropFirst(2).prefix(2))/\(name)"
    }

    /// `derived/ab/<sha1>-<suffix>`, e.g. `-thumb.webp`, `-preview.jpg`, `-clip.mp4`.
    public func derivedRelativePath(_ checksum: Checksum, suffix: String) -> String {
        let hex = checksum.hex
        return "derived/\(hex.prefix(2))/\(hex)-\(suffix)"
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
