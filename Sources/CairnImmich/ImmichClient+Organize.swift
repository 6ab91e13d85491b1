import CairnCore
import Foundation
import ImmichAPI
import OpenAPIRuntime

/// An asset as a search returns it: what a restore needs.
public struct ImmichAssetSummary: Sendable, Hashable {
    public var id: String
    /// The SHA1 as Immich answers it: base64.
    public var checksum: String
    public var isTrashed: Bool
    public var livePhotoVideoID: String?

    /// The content's identity, read from the base64 Immich answers with.
    public var contentChecksum: Checksum? { Data(base64Encoded: checksum).flatMap { Checksum(bytes: $0) } }
}

extension ImmichClient {
    /// The tag of `path` (parents included, as Immich makes them), created if missing. Returns its id.
    public func upsertTag(_ path: String) async throws(ImmichFailure) -> String {
        let tags = try await perform("create a tag", { try await api.upsertTags(body: .json(.init(tags: [path]))) }) {
            try $0.ok.body.json
        }
        guard let tag = tags.first(where: { $0.value == path }) ?? tags.last else {
            throw ImmichFailure(kind: .permanent, operation: "create a tag",
                                message: "the server returned no tag for \(path)")
        }
        return tag.id
    }

    /// Stacks `assetIDs` (two or more, the primary first) and returns the stack's id. The server takes all or
    /// nothing: one asset it will not let the key update refuses the whole request.
    public func createStack(_ assetIDs: [String]) async throws(ImmichFailure) -> String {
        try await perform("create a stack", { try await api.createStack(body: .json(.init(assetIds: assetIDs))) }) {
            try $0.created.body.json.id
        }
    }

    /// Tags many assets in one request.
    public func tag(_ assetIDs: [String], with tagID: String) async throws(ImmichFailure) {
        guard !assetIDs.isEmpty else { return }
        try await perform("tag assets", {
            try await api.bulkTagAssets(body: .json(.init(assetIds: assetIDs, tagIds: [tagID])))
        }) { _ = try $0.ok }
    }

    /// The id of the user's album named `name`, created (empty) when there is none. Each try lists the albums
    /// first, so a try whose answer was lost after the album was made finds it instead of making a second.
    public func album(named name: String) async throws(ImmichFailure) -> String {
        try await withRetries("find or create an album") { () throws(ImmichFailure) in
            // Albums shared with the user are listed too, and one may carry the same name: only one of the user's
            // own is theirs to fill.
            let albums = try await once("list albums", { try await api.getAllAlbums(query: .init(isOwned: true, name: name)) }) {
                try $0.ok.body.json
            }
            if let existing = albums.first(where: { $0.albumName == name }) { return existing.id }
            return try await once("create an album", { try await api.createAlbum(body: .json(.init(albumName: name))) }) {
                try $0.created.body.json.id
            }
        }
    }

    /// Adds many assets to an album in one request (assets already in it are left as they are). Immich answers 200
    /// whatever happened; a `no_permission` in the answer is a refusal.
    public func addToAlbum(_ assetIDs: [String], albumID: String) async throws(ImmichFailure) {
        guard !assetIDs.isEmpty else { return }
        try await perform("fill an album", {
            try await api.addAssetsToAlbums(body: .json(.init(albumIds: [albumID], assetIds: assetIDs)))
        }) {
            let answer = try $0.ok.body.json
            // `duplicate`: every asset was in it already.
            guard answer.success || answer.error != .noPermission else {
                throw ImmichFailure(kind: .permanent, operation: "fill an album", status: 200,
                                    message: "the server refused (no permission to add these assets to album \(albumID))")
            }
        }
    }

    /// Every asset carrying the tag, trashed ones included (a run's tag finds what it trashed).
    public func assets(taggedWith tagID: String) async throws(ImmichFailure) -> [ImmichAssetSummary] {
        try await searchAll { page in Components.Schemas.MetadataSearchDto(page: page, size: 1000, tagIds: [tagID], withDeleted: true) }
    }

    /// Every asset the server's trash took at `since` or later, restored since or not yet purged (Immich searches the
    /// trash by `deletedAt` when `trashedAfter` is given: `server/src/utils/database.ts` `searchAssetBuilder`).
    public func assetsTrashed(since: Date) async throws(ImmichFailure) -> [ImmichAssetSummary] {
        try await searchAll { page in Components.Schemas.MetadataSearchDto(page: page, size: 1000, trashedAfter: since, withDeleted: true) }
    }

    /// Every page of a metadata search.
    private func searchAll(_ query: (Int) -> Components.Schemas.MetadataSearchDto) async throws(ImmichFailure)
        -> [ImmichAssetSummary] {
        var found: [ImmichAssetSummary] = []
        var page = 1
        while true {
            let body = query(page)
            let result = try await perform("search assets", { try await api.searchAssets(body: .json(body)) }) {
                try $0.ok.body.json.assets
            }
            found += result.items.map {
                ImmichAssetSummary(id: $0.id, checksum: $0.checksum, isTrashed: $0.isTrashed,
                                   livePhotoVideoID: $0.livePhotoVideoId)
            }
            guard let next = result.nextPage, let number = Int(next), number > page else { return found }
            page = number
        }
    }
}
