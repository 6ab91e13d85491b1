import CairnCore
import CairnLibrary

/// One asset to trash: its original and derived files, library-relative, original first.
public struct TrashItem: Codable, Sendable, Equatable {
    public var checksum: Checksum
    public var libraryPaths: [String]
    /// Where the asset was in the source, recorded in the journal for `restore --file-name-matches`.
    public var sourcePath: String?

    public init(checksum: Checksum, libraryPaths: [String], sourcePath: String? = nil) {
        self.checksum = checksum
        self.libraryPaths = libraryPaths
        self.sourcePath = sourcePath
    }
}

/// A file the trash, a restore or a purge left alone, and why.
public struct DeletionFailure: Sendable, Equatable, CustomStringConvertible {
    public var checksum: Checksum?
    public var path: String
    public var reason: FailureReason

    public init(checksum: Checksum?, path: String, reason: FailureReason) {
        self.checksum = checksum
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

public struct TrashReport: Sendable, Equatable {
    /// What was moved into `trash/<run-id>/` (paths actually moved this call).
    public var trashed: [TrashItem] = []
    public var failures: [DeletionFailure] = []
}

public struct RestoreReport: Sendable, Equatable {
    /// What was moved back into the library.
    public var restored: [TrashItem] = []
    /// Library paths already holding identical bytes: left as they were (the trash copy stays until purged).
    public var alreadyPresent: [String] = []
    public var failures: [DeletionFailure] = []
    public var restoredFileCount: Int { restored.reduce(0) { $0 + $1.libraryPaths.count } }
}

public struct PurgeReport: Sendable, Equatable {
    public var purgedRuns: [String] = []
    public var purgedFileCount = 0
    /// Run folders not old enough yet.
    public var keptRuns: [String] = []
    /// Entries of `trash/` left alone (unknown to the journal, not a folder...).
    public var skipped: [DeletionFailure] = []
}

/// A deletion the destination settled before cairn could carry it out: the asset is already gone there (a person
/// emptied the trash, or a purge ran), or a person put it where this key may not touch it (Immich's Locked
/// Folder), which cairn takes as the person's choice to keep it.
public struct SettledDeletion: Sendable, Equatable, CustomStringConvertible {
    public enum Way: String, Sendable, Equatable {
        /// Gone for good at the destination: recorded as trashed by this run, with nothing to restore.
        case alreadyGone
        /// Kept out of cairn's reach at the destination: left alone, and kept from now on.
        case keptByPerson
    }

    public var checksum: Checksum
    public var path: String
    public var way: Way

    public init(checksum: Checksum, path: String, way: Way) {
        self.checksum = checksum
        self.path = path
        self.way = way
    }

    public var description: String {
        switch way {
        case .alreadyGone: return "\(path): already gone from the destination (its trash was emptied); recorded as trashed"
        case .keptByPerson: return "\(path): in the destination's Locked Folder (or not this key's); left alone and kept"
        }
    }
}
