import CairnCore

/// Something the walk could not read; the rest of the walk went on.
public struct ScanIssue: Sendable, Hashable, CustomStringConvertible {
    public var relativePath: String
    public var reason: String
    public var category: FailureCategory = .other
    public var description: String { "\(relativePath): \(reason)" }
}

/// Everything one walk of a source found.
public struct ScanReport: Sendable {
    /// The source root as given, and as resolved (the walk never leaves the resolved root).
    public var root: String
    /// Photos and videos, sorted by relative path.
    public var mediaFiles: [SourceFile] = []
    /// Sidecars (`.xmp`, `.aae`, Takeout `.json`), sorted by relative path: stored beside the media they describe.
    public var sidecarFiles: [SourceFile] = []
    /// Regular files that are not media or sidecars: counted, never imported.
    public var otherFiles = 0
    public var junkSkipped = 0
    /// Symbolic links, which are never followed (so a link can never lead the walk out of the source).
    public var symlinksSkipped: [String] = []
    /// Folders or files that could not be read. A scan with issues must not be trusted for deletions.
    public var issues: [ScanIssue] = []
    /// Archive entries never read, and why (a name that would leave the archive, a link): reported, but, unlike
    /// `issues`, no reason to distrust the walk: the same entries are refused on every walk.
    public var refusedEntries: [ScanIssue] = []
    /// Archives modified under a minute before the walk (still being downloaded or written, as far as it can tell):
    /// left for the next run, and named. Not a failure, but the walk does not know what they hold, so a sync holds
    /// the deletions of what was in them as it does for `issues`.
    public var settlingArchives: [ScanIssue] = []
    /// Archives listed by reading them, and archives whose saved listing stood because they had not changed.
    public var archivesListed = 0
    public var archivesUnchanged = 0
    /// Whether the root holds a `.cairn-source` marker file.
    public var hasSourceMarker = false

    /// How many media files the walk found, and their bytes (also when they were streamed, not kept).
    public var mediaCount = 0
    public var mediaBytes: Int64 = 0
    /// How many sidecars the walk found (also when they were streamed, not kept).
    public var sidecarCount = 0
    public var isComplete: Bool { issues.isEmpty }
}

/// Why a source cannot be walked at all.
public enum ScanError: Error, CustomStringConvertible, Sendable, Equatable {
    case rootMissing(String)
    case rootNotDirectory(String)
    case rootUnreadable(SystemCallError)
    /// What a streaming walk handed its files to failed (the catalog could not be written).
    case sinkFailed(String)
    /// The walk stopped before its end because the run was stopping (`SourceScanner.interrupt`).
    case interrupted(String)

    public var description: String {
        switch self {
        case .rootMissing(let path): return "\(path): the source folder does not exist (is the disk mounted?)"
        case .rootNotDirectory(let path): return "\(path): the source is not a folder"
        case .rootUnreadable(let error): return error.description
        case .sinkFailed(let error): return "the scan could not be recorded: \(error)"
        case .interrupted(let path): return "\(path): the walk was interrupted before its end"
        }
    }
}
