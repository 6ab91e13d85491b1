import CairnCore
import Foundation
import Glibc

/// What a person asked a run to leave out of its new content (`--exclude`, `--kind`, `--since`, `--until`, and
/// Google Photos' trash unless `--include-trashed`). A file left out is skipped with its reason, never planned,
/// and never taken for gone: it is still at the source, so no sync deletes what it once brought in.
public struct ImportFilter: Sendable, Equatable {
    /// Shell patterns: one without `/` is matched against a file's name, one with `/` against its path in the
    /// source (`*` crossing folders); either way regardless of case.
    public var excludes: [String] = []
    public var kind: MediaKind?
    /// Taken at or after.
    public var since: Date?
    /// Taken before.
    public var until: Date?
    public var includeTrashed = false

    public init() {}

    /// Whether a capture time is needed (read from the file, else from its Takeout JSON).
    var needsCaptureTime: Bool { since != nil || until != nil }

    /// The pattern of `excludes` that `relativePath` matches, if one does.
    func exclusion(of relativePath: String) -> String? {
        let name = relativePath.split(separator: "/").last.map(String.init) ?? relativePath
        // Both lowered, rather than glibc's FNM_CASEFOLD (a GNU extension Swift's Glibc does not show).
        return excludes.first { pattern in
            fnmatch(pattern.lowercased(), (pattern.contains("/") ? relativePath : name).lowercased(), 0) == 0
        }
    }

    /// Why a file taken at `taken` (nil: unknown) is left out by `since` and `until`; nil keeps it.
    func dateReason(taken: Date?) -> String? {
        guard needsCaptureTime else { return nil }
        guard let taken else { return "capture time unknown (--since, --until keep only what is known to be in range)" }
        if let since, taken < since { return "taken \(Timestamp.toTheSecond(taken)), before --since \(Timestamp.toTheSecond(since))" }
        if let until, taken >= until { return "taken \(Timestamp.toTheSecond(taken)), not before --until \(Timestamp.toTheSecond(until))" }
        return nil
    }
}
