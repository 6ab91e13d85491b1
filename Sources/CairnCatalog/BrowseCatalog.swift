import CairnCore
import Foundation

/// A source file that held some content at its source's last scan.
public struct SourcePath: Sendable, Equatable {
    public var root: String
    public var relativePath: String

    public init(root: String, relativePath: String) {
        self.root = root
        self.relativePath = relativePath
    }
}

/// An asset as `cairn ls` lists it: the asset, its capture date and its stored probe.
public struct ListedAsset: Sendable, Equatable {
    public var asset: AssetRecord
    public var captureDate: Date?
    public var probeJSON: String?

    public init(asset: AssetRecord, captureDate: Date?, probeJSON: String?) {
        self.asset = asset
        self.captureDate = captureDate
        self.probeJSON = probeJSON
    }
}

/// What the read side asks of a catalog beyond items and links, as a person asks about a library (`cairn asset`,
/// `cairn ls`, tapes).
public protocol BrowseCatalog: Sendable {
    /// Every source path known to hold `checksum` at its source's last scan, by root, then path.
    func sourcePaths(of checksum: Checksum) async throws -> [SourcePath]
    /// The content a source path named `path` holds (relative to its source, or absolute under its root).
    func checksums(atSourcePath path: String) async throws -> [Checksum]
    /// Assets by capture date (those without one last), then checksum; `albums`, when given, keeps the members of
    /// those albums (by id) alone.
    func listedAssets(since: Date?, until: Date?, kind: MediaKind?, albums: [Int64]?) async throws -> [ListedAsset]
    /// The import item of `checksum`, when one was planned.
    func importItem(_ checksum: Checksum) async throws -> ItemRecord?
    /// Items and bytes of originals by kind: of the whole library, or of what the run `runID` brought in.
    func assetTally(broughtInBy runID: String?) async throws -> [MediaKind: (items: Int, bytes: Int64)]
    /// The newest assets brought into the library, newest first (then by checksum).
    func newestAssets(limit: Int) async throws -> [AssetRecord]
    /// Which of `checksums` have a thumbnail: one question for a page of items, not one per item.
    func thumbnailed(_ checksums: [Checksum]) async throws -> Set<Checksum>
}

/// What the status page and the metrics read: the library's items, runs, sources, reconciliation and tallies.
public typealias StatusCatalog = BrowsingCatalog & RunCatalog & SnapshotCatalog & ReconcileCatalog

/// What the library browser reads.
public typealias BrowsingCatalog = ItemCatalog & AssetLinkCatalog & BrowseCatalog

extension SQLiteCatalog: BrowseCatalog {}
