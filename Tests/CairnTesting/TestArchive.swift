import Foundation

/// Zip and tar archives made for a test by Python's `zipfile` and `tarfile` (`Tests/Fixtures/archives/make-archive.py`):
/// archives as common tools write them, not as cairn would.
public enum TestArchive {
    public struct Entry: Encodable, Sendable {
        public var name: String
        public var file: String?
        public var text: String?
        public var stored: Bool?
        public var cp437: Bool?
        public var unflagged: Bool?
        public var unicodePath: Bool?
        public var link: String?

        enum CodingKeys: String, CodingKey {
            case name, file, text, stored, cp437, unflagged, unicodePath = "unicode_path", link
        }

        /// An entry holding the bytes of the file at `file`.
        public static func file(_ name: String, from file: String, stored: Bool = false) -> Entry {
            Entry(name: name, file: file, stored: stored)
        }

        /// An entry holding `text`.
        public static func text(_ name: String, _ text: String, cp437: Bool = false) -> Entry {
            Entry(name: name, text: text, cp437: cp437 ? true : nil)
        }

        /// How a zip tool may write a name without the UTF-8 flag.
        public enum UnflaggedName: Sendable { case utf8, unicodePathField }

        /// An entry holding `text`, its name written without the UTF-8 flag as `name` says.
        public static func text(_ name: String, _ text: String, unflagged: UnflaggedName) -> Entry {
            Entry(name: name, text: text, unflagged: unflagged == .utf8 ? true : nil,
                  unicodePath: unflagged == .unicodePathField ? true : nil)
        }

        /// A symbolic link entry pointing at `target`.
        public static func link(_ name: String, to target: String) -> Entry { Entry(name: name, link: target) }
    }

    private struct Spec: Encodable {
        var path: String
        var entries: [Entry]
        var truncate: Double?
        var filler: Int?
    }

    /// Writes the archive at `path` (its kind from its name: .zip, .tar, .tgz, .tar.gz), cut to `truncatedTo` of its
    /// size when given, and dates it `age` seconds in the past (a fresh archive is left for the next walk).
    /// `filler`: a zip gets this many more empty `filler/N.txt` entries (more than 65,535 make it a Zip64 archive).
    public static func write(_ entries: [Entry], to path: String, truncatedTo fraction: Double? = nil,
                             filler: Int? = nil, age: TimeInterval = 3600) throws {
        let script = URL(fileURLWithPath: ExternalTool.packageRoot)
            .appendingPathComponent("Tests/Fixtures/archives/make-archive.py").path
        let spec = try JSONEncoder().encode(Spec(path: path, entries: entries, truncate: fraction, filler: filler))
        try ExternalTool.run(["python3", script], input: spec)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: path)
    }
}
