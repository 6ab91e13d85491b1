import Foundation
import ImmichAPI
import OpenAPIRuntime

extension ImmichDouble {
    func upsertTags(_ input: Operations.UpsertTags.Input) async throws -> Operations.UpsertTags.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        let tags = await store.upsertTags(dto.tags, owner: user.id, now: now())
        return .ok(.init(body: .json(tags.map(Wire.tag))))
    }

    func bulkTagAssets(_ input: Operations.BulkTagAssets.Input) async throws -> Operations.BulkTagAssets.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        let count = await store.tagAssets(tagIds: dto.tagIds.map { $0.lowercased() },
                                          assetIds: dto.assetIds.map { $0.lowercased() }, owner: user.id, now: now())
        return .ok(.init(body: .json(.init(count: count))))
    }

    func getAllAlbums(_ input: Operations.GetAllAlbums.Input) async throws -> Operations.GetAllAlbums.Output {
        let user = try RequestScope.requireUser()
        // Real server: `server/src/services/album.service.ts` `getAll` over `album.repository.ts` `getAll` and
        // `buildAlbumBaseQuery`: every album the user owns or that is shared with them; `isOwned` by the user's
        // role, `isShared` by whether anyone else is in it, `name` exact; `assetId` alone ignores the rest.
        var albums = await store.albums(of: user.id)
        if let assetId = input.query.assetId?.lowercased() {
            albums = albums.filter { $0.assetIds.contains(assetId) }
        } else {
            if let id = input.query.id?.lowercased() { albums = albums.filter { $0.id == id } }
            if let name = input.query.name { albums = albums.filter { $0.name == name } }
            if let owned = input.query.isOwned { albums = albums.filter { ($0.role(of: user.id) == .owner) == owned } }
            if let shared = input.query.isShared { albums = albums.filter { !$0.sharedWith.isEmpty == shared } }
        }
        var out: [Components.Schemas.AlbumResponseDto] = []
        for album in albums { out.append(await wire(album)) }
        return .ok(.init(body: .json(out)))
    }

    func createAlbum(_ input: Operations.CreateAlbum.Input) async throws -> Operations.CreateAlbum.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        let album = await store.createAlbum(name: dto.albumName, description: dto.description ?? "",
                                            assetIds: (dto.assetIds ?? []).map { $0.lowercased() }, owner: user.id,
                                            now: now())
        return .created(.init(body: .json(await wire(album))))
    }

    /// Real server: `album.service.ts` `addAssetsToAlbums`: 200 whatever happens. No album the user owns or edits
    /// (`album.assetCreate` access), or none of the assets theirs (`asset.share`): `{success: false, error:
    /// "no_permission"}`; every asset already in the albums: `{success: false, error: "duplicate"}`; else success.
    /// Ids the key may not touch are dropped silently.
    func addAssetsToAlbums(_ input: Operations.AddAssetsToAlbums.Input) async throws -> Operations.AddAssetsToAlbums.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        var albumIds: [String] = []
        for albumId in dto.albumIds.map({ $0.lowercased() }) {
            if let role = await store.album(albumId)?.role(of: user.id), role != .viewer { albumIds.append(albumId) }
        }
        var assetIds: [String] = []
        for assetId in dto.assetIds.map({ $0.lowercased() }) {
            guard let asset = await store.asset(assetId, owner: user.id), asset.visibility != .locked else { continue }
            assetIds.append(assetId)
        }
        guard !albumIds.isEmpty, !assetIds.isEmpty else {
            return .ok(.init(body: .json(.init(error: .noPermission, success: false))))
        }
        var added = false
        for albumId in albumIds where await store.add(assetIds, to: albumId, owner: user.id, now: now()) { added = true }
        let result: Components.Schemas.AlbumsAddAssetsResponseDto =
            added ? .init(success: true) : .init(error: .duplicate, success: false)
        return .ok(.init(body: .json(result)))
    }

    func wire(_ album: Album) async -> Components.Schemas.AlbumResponseDto {
        let assets = await store.assets(album.assetIds)
        let members = album.sharedWith.sorted { $0.key < $1.key }.compactMap { id, role in users.user(id: id).map { ($0, role) } }
        return Wire.album(album, owner: users.user(id: album.ownerId), members: members, assets: assets, startedAt: startedAt)
    }
}
