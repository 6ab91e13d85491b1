import CairnCore
import Foundation

/// A catalog's record of the library's trash: an asset moved there leaves `asset` (so no listing, import check or
/// reconciliation sees it) and waits with the paths its files had until a restore puts it back or a purge forgets it.
public protocol TrashCatalog: Sendable {
    /// Moves the assets' records to the trash as of run `runID`, in one commit; checksums without an asset are skipped.
    func markTrashed(_ items: [(checksum: Checksum, libraryPaths: [String])], runID: String, at date: Date) async throws
    /// Puts back the records of assets trashed by `runID` (an asset imported again meanwhile keeps its record);
    /// returns the checksums whose records came back, sorted.
    func restoreTrashed(_ checksums: [Checksum], runID: String) async throws -> [Checksum]
    /// Forgets the records of runs whose trash was purged for good.
    func forgetTrashed(runIDs: [String]) async throws
    /// Assets in the trash, of one run or all, by trash time then checksum.
    func trashedAssets(runID: String?) async throws -> [TrashedAssetRecord]
}

/// What a deletion, a restore or a purge reads and writes: the assets and their links, the sources that still hold
/// content, the trash's records, and the reconciliation stores' waiting lists and exclusions.
public typealias DeletionCatalog = ItemCatalog & SnapshotCatalog & AssetLinkCatalog & TrashCatalog & ReconcileCatalog

extension SQLiteCatalog: TrashCatalog {}

/// One item of `markTrashed` as a value that may cross to the pool (a tuple of a checksum and paths is not one).
struct TrashedPaths: Sendable {
    var checksum: Checksum
    var libraryPaths: [String]
}
