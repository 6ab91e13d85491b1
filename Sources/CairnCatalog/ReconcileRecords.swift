import CairnCore
import Foundation

/// What reconciliation remembers about a source itself between runs (the safety rails' memory).
public struct ReconcileSourceFacts: Codable, Sendable, Equatable {
    /// Whether `.cairn-source` was there at the last healthy scan.
    public var hadMarker = false
    /// Whether cairn has seen this source once in a healthy scan; until then nothing is trashed.
    public var firstRunDone = false
    /// The last run that reconciled this source (healthy or not).
    public var lastSyncRunID: String?
    /// The last run whose scan became the healthy snapshot.
    public var lastHealthyRunID: String?
    public var lastHealthyFileCount: Int?
    public var lastHealthyScanAt: Date?

    public init() {}

    public var isFirstRun: Bool { !firstRunDone }

    /// The facts after `sync`: it is the last sync; a healthy one also records the marker, the file count (of
    /// `healthyFileCount` files) and that the first run is done. Both catalogs save what this says.
    public mutating func record(_ sync: SyncRecord, healthyFileCount: Int) {
        lastSyncRunID = sync.runID
        guard sync.advanceSnapshot else { return }
        firstRunDone = true
        hadMarker = sync.sourceHasMarker
        lastHealthyRunID = sync.runID
        lastHealthyFileCount = healthyFileCount
        lastHealthyScanAt = sync.now
    }
}

/// A library checksum that waits, as of the last sync of its source: what `cairn pending list` shows.
public struct PendingItem: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable, CaseIterable {
        /// Past quarantine (or unconfirmed under trusting): trashed by the next sync that applies deletions.
        case eligible
        /// Approved by a person: trashed by the next sync that applies deletions.
        case approved
        /// Eligible, but over `max-delete`: waits for a later run.
        case deferred
        /// Eligible, but a safety rail held every deletion of that run.
        case held
        /// Confirmed deleted at the source; waits until `eligibleAt`.
        case quarantine
        /// Absent from the source without proof it was deleted (strict): waits for approve or exclude.
        case review
    }

    public var sourceID: Int64
    public var checksum: Checksum
    public var status: Status
    public var confirmedAt: Date?
    public var eligibleAt: Date?
    /// The sync that planned it.
    public var runID: String
}

/// An asset moved to the library's trash: its catalog record as it was, and the files that moved.
public struct TrashedAssetRecord: Sendable, Equatable {
    public var asset: AssetRecord
    public var trashRunID: String
    public var trashedAt: Date
    /// Library-relative paths as they were before trashing (original first, then derived files).
    public var libraryPaths: [String]

    public init(asset: AssetRecord, trashRunID: String, trashedAt: Date, libraryPaths: [String]) {
        self.asset = asset
        self.trashRunID = trashRunID
        self.trashedAt = trashedAt
        self.libraryPaths = libraryPaths
    }
}

extension PendingItem {
    /// `items` as `cairn pending list` shows them: by source, status, eligible date, checksum.
    public static func inListOrder(_ items: [PendingItem]) -> [PendingItem] {
        let order = Dictionary(uniqueKeysWithValues: Status.allCases.enumerated().map { ($1, $0) })
        return items.sorted {
            ($0.sourceID, order[$0.status]!, $0.eligibleAt ?? .distantPast, $0.checksum)
                < ($1.sourceID, order[$1.status]!, $1.eligibleAt ?? .distantPast, $1.checksum)
        }
    }
}

/// A `cairn pending` request the catalog cannot carry out, named in one line.
public struct ReconcileStoreError: Error, Equatable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// A checksum waiting for a decision or a later run, for `pending list` (its run is the sync's).
public struct PendingEntry: Sendable, Equatable {
    public var checksum: Checksum
    public var status: PendingItem.Status
    public var confirmedAt: Date?
    public var eligibleAt: Date?

    public init(checksum: Checksum, status: PendingItem.Status, confirmedAt: Date? = nil, eligibleAt: Date? = nil) {
        self.checksum = checksum
        self.status = status
        self.confirmedAt = confirmedAt
        self.eligibleAt = eligibleAt
    }
}

/// Everything one sync writes to the reconciliation stores at once (`ReconcileStore.commit`).
public struct SyncRecord: Sendable {
    public var runID: String
    public var now: Date
    public var changes: StoreDelta
    /// Whether the scan was healthy enough to become the new healthy snapshot.
    public var advanceSnapshot: Bool
    public var sourceHasMarker: Bool
    public var pending: [PendingEntry]

    public init(runID: String, now: Date, changes: StoreDelta, advanceSnapshot: Bool, sourceHasMarker: Bool,
                pending: [PendingEntry]) {
        self.runID = runID
        self.now = now
        self.changes = changes
        self.advanceSnapshot = advanceSnapshot
        self.sourceHasMarker = sourceHasMarker
        self.pending = pending
    }
}
