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
        var albums = await store.ownedAlbums(user.id)
        // Immich: assetId filters alone and ignores the other parameters.
        if let assetId = input.query.assetId?.lowercased() {
            albums = albums.filter { $0.assetIds.contains(assetId) }
        } else {
            if let id = input.query.id?.lowercased() { albums = albums.filter { $0.id == id } }
            if let name = input.query.name { albums = albums.filter { $0.name == name } }
            if input.query.isShared == true || input.query.isOwned == false { albums = [] }
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

    /// Immich's bulk add: success when any asset went into any album, else `duplicate` (or `not_found`).
    func addAssetsToAlbums(_ input: Operations.AddAssetsToAlbums.Input) async throws -> Operations.AddAssetsToAlbums.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        let assetIds = dto.assetIds.map { $0.lowercased() }
        var added = false
        var anyAlbum = false
        for albumId in dto.albumIds.map({ $0.lowercased() }) {
            guard let album = await store.album(albumId), album.ownerId == user.id else { continue }
            anyAlbum = true
            if await store.add(assetIds, to: albumId, owner: user.id, now: now()) { added = true }
        }
        let result: Components.Schemas.AlbumsAddAssetsResponseDto =
            added ? .init(success: true) : .init(error: anyAlbum ? .duplicate : .notFound, success: false)
        return .ok(.init(body: .json(result)))
    }

    func wire(_ album: Album) async -> Components.Schemas.AlbumResponseDto {
        let assets = await store.assets(album.assetIds)
        return Wire.album(album, owner: users.user(id: album.ownerId), assets: assets, startedAt: startedAt)
    }
}
