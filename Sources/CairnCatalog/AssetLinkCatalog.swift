import CairnCore
import Foundation

/// The assets and what links to them: what a destination reads of a run's assets after the lanes.
public typealias AssetCatalog = ItemCatalog & AssetLinkCatalog

/// What a catalog links to its assets: Live Photo pairs, stacks, sidecars (`.xmp`, `.aae`, Takeout `.json`), albums and
/// tags.
public protocol AssetLinkCatalog: Sendable {
    /// Pairs kept once made: a pair whose still or motion part is already paired is left out.
    func savePairs(_ pairs: [AssetPairRecord]) async throws
    /// The pair `checksum` belongs to, as still or motion.
    func pair(of checksum: Checksum) async throws -> AssetPairRecord?
    /// Every pair, by still.
    func allPairs() async throws -> [AssetPairRecord]
    /// The pairs the destination has not linked yet (a failed link waits here for the next run), by still.
    func pairsAwaitingLink() async throws -> [AssetPairRecord]
    /// The destination linked the pairs of these stills.
    func markPairsLinked(_ stills: [Checksum], at date: Date) async throws
    /// Up to `limit` probed stills and videos in no pair yet after `checksum`, by checksum, with their content
    /// identifier (from the stored probe).
    func unpairedAssets(after checksum: Checksum?, limit: Int) async throws -> [PairingCandidate]

    /// Up to `limit` stills with a capture date after `position`, by capture date, then checksum (shots of one moment
    /// together), with their burst identifier and camera (from the stored probe) and the stack each is in.
    func stackCandidates(after position: StackCandidate.Position?, limit: Int) async throws -> [StackCandidate]
    /// Saves each stack whole. A stack that takes in every member of stacks saved before replaces them (and is made
    /// at the destination again, its primary first); one that shares members with a stack it does not take in whole
    /// is left out.
    func saveStacks(_ stacks: [AssetStack]) async throws
    /// The stack `checksum` is a member of.
    func stack(of checksum: Checksum) async throws -> AssetStack?
    /// Every stack, by primary.
    func allStacks() async throws -> [AssetStack]
    /// The stacks the destination has not made yet (one that failed waits here for the next run), by primary.
    func stacksAwaitingLink() async throws -> [AssetStack]
    /// The destination made the stacks of these primaries.
    func markStacksLinked(_ primaries: [Checksum], at date: Date) async throws

    /// Links a stored sidecar to its asset; the same bytes linked to the same asset again change nothing.
    func linkSidecar(_ sidecar: SidecarRecord) async throws
    /// The sidecars of an asset, by path.
    func sidecars(of asset: Checksum) async throws -> [SidecarRecord]
    /// Fills a probed asset's capture time and position from a sidecar where the file had none, with its new probe JSON.
    func fillFromSidecar(_ asset: Checksum, captureDate: Date?, latitude: Double?, longitude: Double?,
                         probeJSON: String) async throws

    /// Creates or updates the album of (`album.sourceID`, `album.folder`) and adds those of `members` the library
    /// holds as assets (membership only grows).
    func saveAlbum(_ album: AlbumRecord, members: [Checksum]) async throws -> AlbumChange
    /// Every album with its members in the library, by date (undated last), then title.
    func albums() async throws -> [AlbumSummary]
    /// The albums `checksum` belongs to, by title.
    func albums(of checksum: Checksum) async throws -> [AlbumRecord]
    /// The albums titled `title`, whatever the case of its ASCII letters.
    func albums(titled title: String) async throws -> [AlbumRecord]

    /// What runs read of the Takeout JSONs at these source paths that said their photo sat in Google Photos' trash.
    func trashedTakeoutJSONs(atSourcePaths paths: [String]) async throws -> [TrashedTakeoutJSON]
    /// Keeps what these JSONs said, so the runs that hold their photos back do not read them again.
    func saveTrashedTakeoutJSONs(_ jsons: [TrashedTakeoutJSON]) async throws

    /// Tags `assets` with each of `tags` (`--tag`, `--session-tag`); a tag an asset has already stays as it was.
    func tag(_ assets: [Checksum], with tags: [String], at date: Date) async throws
    /// The tags of an asset, by name.
    func tags(of checksum: Checksum) async throws -> [String]
    /// The assets tagged `tag`, whatever the case of its ASCII letters.
    func assets(taggedWith tag: String) async throws -> Set<Checksum>
}

extension SQLiteCatalog: AssetLinkCatalog {}
