import CairnCore
import CairnLibrary
import Foundation

/// One line of `<library>/journal.jsonl`: an action cairn is about to carry out.
public struct JournalEntry: Codable, Sendable, Equatable {
    public enum Action: String, Codable, Sendable {
        /// Library files moved into `trash/<run-id>/`.
        case trash
        /// Files moved back from `trash/<run-id>/` to where they were.
        case restore
        /// Files of `trash/<run-id>/` deleted for good.
        case purge
    }

    public var runID: String
    public var action: Action
    /// The asset the files belong to (absent for a purge, which works per run folder).
    public var checksum: Checksum?
    /// Library-relative paths of the files, as they were before trashing.
    public var paths: [String]
    /// Where the asset was in the source, when known.
    public var sourcePath: String?
    public var timestamp: Date

    public init(
        runID: String, action: Action, checksum: Checksum?, paths: [String], sourcePath: String? = nil, timestamp: Date
    ) {
        self.runID = runID
        self.action = action
        self.checksum = checksum
        self.paths = paths
        self.sourcePath = sourcePath
        self.timestamp = timestamp
    }
}

/// One run as `cairn journal list` shows it.
public struct JournalRunSummary: Sendable, Equatable {
    public var runID: String
    public var firstTimestamp: Date
    public var lastTimestamp: Date
    public var trashedAssets = 0
    public var trashedFiles = 0
    public var restoredAssets = 0
    public var restoredFiles = 0
    public var purgedFiles = 0
}

/// The journal as read back: every entry that decoded, and the line numbers of any that did not
/// (a line torn by a crash mid-append, or hand edits), so a reader can warn instead of failing.
public struct JournalContents: Sendable, Equatable {
    public var entries: [JournalEntry]
    public var damagedLines: [Int]
}
