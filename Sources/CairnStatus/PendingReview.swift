import CairnCatalog
import CairnCore
import CairnLibrary
import Foundation

/// What `cairn pending` reads and writes of a catalog: its sources, their reconciliation stores, and the assets whose
/// source paths name what waits.
public typealias PendingReviewCatalog = ItemCatalog & SnapshotCatalog & ReconcileCatalog

/// The `pending` verbs over one library: what waits for each source, and a person's approve and exclude
/// decisions. The command line goes through this, never to the catalog.
public struct PendingReview: Sendable {
    /// The library's catalog: its SQLite file or its PostgreSQL database.
    public let catalog: any PendingReviewCatalog

    public init(catalog: any PendingReviewCatalog) { self.catalog = catalog }

    /// A source the library has synced.
    public struct Source: Sendable, Equatable {
        public var id: Int64
        public var rootPath: String
    }

    /// One checksum waiting at a source.
    public struct Waiting: Sendable, Equatable {
        /// `eligible`, `approved`, `deferred`, `held`, `quarantine` or `review`.
        public var status: String
        public var checksum: Checksum
        /// Where the content was first seen (nil when its asset is gone).
        public var firstSourcePath: String?
        public var confirmedAt: Date?
        public var eligibleAt: Date?
    }

    /// The sources at `folder` (its path as given or resolved), or every source when `folder` is nil.
    public func sources(at folder: String? = nil) async throws -> [Source] {
        let all = try await catalog.sources().compactMap { record in
            record.id.map { Source(id: $0, rootPath: record.rootPath) }
        }
        guard let folder else { return all }
        let resolved = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
        let matching = all.filter { $0.rootPath == folder || $0.rootPath == resolved }
        guard !matching.isEmpty else { throw PendingReviewError.unknownSource(folder, known: all.map(\.rootPath)) }
        return matching
    }

    /// What waits at `source`, and the run that last reconciled it (nil: never synced).
    public func waiting(at source: Source) async throws -> (lastSyncRunID: String?, items: [Waiting]) {
        let facts = try await catalog.reconcileFacts(sourceID: source.id)
        var items: [Waiting] = []
        for item in try await catalog.pending(sourceID: source.id) {
            items.append(Waiting(status: item.status.rawValue, checksum: item.checksum,
                                 firstSourcePath: try await catalog.asset(item.checksum)?.firstSourcePath,
                                 confirmedAt: item.confirmedAt, eligibleAt: item.eligibleAt))
        }
        return (facts.lastSyncRunID, items)
    }

    /// Trash at the next sync that applies deletions and passes the rails; only checksums a source observed.
    public func approve(_ checksums: [Checksum], at sources: [Source], now: Date = Date()) async throws {
        try await catalog.approve(checksums, sourceIDs: sources.map(\.id), at: now)
    }

    /// Keep in the library whatever happens at the source.
    public func exclude(_ checksums: [Checksum], at sources: [Source], now: Date = Date()) async throws {
        try await catalog.exclude(checksums, sourceIDs: sources.map(\.id), at: now)
    }

    /// Excludes every deletion confirmed since run `runID`; returns the checksums excluded.
    public func excludeConfirmed(sinceRunID runID: String, at sources: [Source], now: Date = Date()) async throws
        -> [Checksum] {
        try await catalog.excludeConfirmed(sinceRunID: runID, sourceIDs: sources.map(\.id), at: now)
    }
}

public enum PendingReviewError: Error, CustomStringConvertible {
    case unknownSource(String, known: [String])

    public var description: String {
        switch self {
        case .unknownSource(let folder, let known):
            return "\(folder): not a source of this library (known: \(known.joined(separator: ", ")))"
        }
    }
}
