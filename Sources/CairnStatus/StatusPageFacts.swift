import CairnCatalog
import CairnCore
import CairnLibrary
import CairnNarration
import Foundation

/// What the status page of `cairn serve` shows, read from the catalog without the run lock: the status report,
/// the timelines of recent runs, the last run's failed files, what waits for review and the newest imports.
public struct StatusPageFacts: Sendable {
    /// One library item on the page, with its thumbnail when it has one.
    public struct Item: Sendable, Equatable {
        public var sha1: String
        public var kind: String
        /// Where the content was first seen, relative to its source.
        public var sourcePath: String
        public var importedAt: Date
        public var hasThumbnail: Bool
    }

    /// An item waiting at a source, and the folder it waits at (for the command that decides it).
    public struct Waiting: Sendable, Equatable {
        public var item: Item?
        public var sha1: String
        public var status: String
        public var sourceRoot: String
        public var eligibleAt: Date?
    }

    public var report: StatusReport
    /// Newest first.
    public var recentRuns: [RunSummary]
    /// The newest run's failed files, with reasons.
    public var failures: [FileFailure]
    public var waiting: [Waiting]
    public var waitingTotal: Int
    public var newest: [Item]

    public static func read(layout: LibraryLayout, catalog: any StatusCatalog, runs runLimit: Int = 12,
                            items itemLimit: Int = 48) async throws -> StatusPageFacts {
        let report = try await LibraryStatus.report(layout: layout, catalog: catalog)
        let decoder = NarrationJSON.decoder()
        var recent = try await catalog.runs(limit: runLimit).compactMap { record in
            record.summary.flatMap { try? decoder.decode(RunSummary.self, from: Data($0.utf8)) }
        }
        if let last = report.lastRun, recent.first?.runID != last.runID {
            recent.removeAll { $0.runID == last.runID }
            recent.insert(last, at: 0)
        }
        var failures: [FileFailure] = []
        if let last = report.lastRun {
            failures = try await catalog.failures(runID: last.runID).prefix(200).map {
                FileFailure(path: $0.relativePath, reason: "\($0.phase.rawValue): \($0.reason)")
            }
            if failures.isEmpty { failures = last.failures }
        }
        let roots = Dictionary(try await catalog.sources().compactMap { source in source.id.map { ($0, source.rootPath) } },
                               uniquingKeysWith: { first, _ in first })
        let pending = try await catalog.pending(sourceID: nil)
        var waitingAssets: [AssetRecord?] = []
        for entry in pending.prefix(itemLimit) { waitingAssets.append(try await catalog.asset(entry.checksum)) }
        let newestAssets = try await catalog.newestAssets(limit: itemLimit)
        // A few dozen items, whatever the library's size; which have thumbnails is one question for them all.
        let thumbnailed = try await catalog.thumbnailed((newestAssets + waitingAssets.compactMap { $0 }).map(\.checksum))
        func item(_ asset: AssetRecord) -> Item {
            Item(sha1: asset.checksum.hex, kind: asset.kind.rawValue, sourcePath: asset.firstSourcePath,
                 importedAt: asset.importedAt, hasThumbnail: thumbnailed.contains(asset.checksum))
        }
        let waiting = zip(pending.prefix(itemLimit), waitingAssets).map { entry, asset in
            Waiting(item: asset.map(item), sha1: entry.checksum.hex, status: entry.status.rawValue,
                    sourceRoot: roots[entry.sourceID] ?? "", eligibleAt: entry.eligibleAt)
        }
        return StatusPageFacts(report: report, recentRuns: recent, failures: failures, waiting: waiting,
                               waitingTotal: pending.count, newest: newestAssets.map(item))
    }

    /// The thumbnail of the content `sha1` (hex), library-relative (in the folder or the library's store); nil when
    /// it has none or `sha1` is not a checksum.
    public static func thumbnail(catalog: any StatusCatalog, sha1: String) async throws
        -> (path: String, format: String)? {
        guard let checksum = Checksum(hex: sha1) else { return nil }
        guard let row = try await catalog.derivedFiles(of: checksum).first(where: { $0.role == .thumbnail }) else {
            return nil
        }
        return (row.path, row.format)
    }
}
