import CairnCatalog
import CairnCore
import CairnLibrary
import Foundation

/// The `pending` verbs over one library: what waits for each source, and a person's approve and exclude
/// decisions. The command line goes through this, never to the catalog.
public struct PendingReview: Sendable {
    public let library: Library
    private var store: ReconcileStore { ReconcileStore(catalog: library.catalog) }

    public init(library: Library) { self.library = library }

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
    public func sources(at folder: String? = nil) throws -> [Source] {
        let all = try store.sources().compactMap { record in record.id.map { Source(id: $0, rootPath: record.rootPath) } }
        guard let folder else { return all }
        let resolved = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
        let matching = all.filter { $0.rootPath == folder || $0.rootPath == resolved }
        guard !matching.isEmpty else { throw PendingReviewError.unknownSource(folder, known: all.map(\.rootPath)) }
        return matching
    }

    /// What waits at `source`, and the run that last reconciled it (nil: never synced).
    public func waiting(at source: Source) throws -> (lastSyncRunID: String?, items: [Waiting]) {
        let facts = try store.facts(sourceID: source.id)
        let items = try store.pending(sourceID: source.id).map { item in
            Waiting(status: item.status.rawValue, checksum: item.checksum,
                    firstSourcePath: try library.catalog.asset(item.checksum)?.firstSourcePath,
                    confirmedAt: item.confirmedAt, eligibleAt: item.eligibleAt)
        }
        return (facts.lastSyncRunID, items)
    }

    /// Trash at the next sync that applies deletions and passes the rails; only checksums a source observed.
    public func approve(_ checksums: [Checksum], at sources: [Source], now: Date = Date()) throws {
        try store.approve(checksums, sourceIDs: sources.map(\.id), at: now)
    }

    /// Keep in the library whatever happens at the source.
    public func exclude(_ checksums: [Checksum], at sources: [Source], now: Date = Date()) throws {
        try store.exclude(checksums, sourceIDs: sources.map(\.id), at: now)
    }

    /// Excludes every deletion confirmed since run `runID`; returns the checksums excluded.
    public func excludeConfirmed(sinceRunID runID: String, at sources: [Source], now: Date = Date()) throws -> [Checksum] {
        try store.excludeConfirmed(sinceRunID: runID, sourceIDs: sources.map(\.id), at: now)
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
