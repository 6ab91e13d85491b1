import Foundation
import ImmichAPI
import OpenAPIRuntime

extension ImmichDouble {
    func getAssetInfo(_ input: Operations.GetAssetInfo.Input) async throws -> Operations.GetAssetInfo.Output {
        let user = try RequestScope.requireUser()
        let id = input.path.id.lowercased()
        try await store.requireAccess([id], owner: user.id, permission: "asset.read")
        guard let asset = await store.asset(id, owner: user.id) else { throw ImmichError.noAccess(permission: "asset.read") }
        return .ok(.init(body: .json(await wire(asset, withStack: true))))
    }

    func updateAsset(_ input: Operations.UpdateAsset.Input) async throws -> Operations.UpdateAsset.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        let id = input.path.id.lowercased()
        try await store.requireAccess([id], owner: user.id, permission: "asset.update")
        let asset = try await store.update(id, owner: user.id, with: dto, now: now())
        // `asset.service.ts` `update` answers with `get`, stack included.
        return .ok(.init(body: .json(await wire(asset, withStack: true))))
    }

    /// `force: true` deletes for good; cairn must never send it, so the double counts it for the tests.
    func deleteAssets(_ input: Operations.DeleteAssets.Input) async throws -> Operations.DeleteAssets.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        try await store.delete(dto.ids.map { $0.lowercased() }, owner: user.id, force: dto.force ?? false, now: now())
        return .noContent(.init())
    }

    func restoreAssets(_ input: Operations.RestoreAssets.Input) async throws -> Operations.RestoreAssets.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        let count = try await store.restore(dto.ids.map { $0.lowercased() }, owner: user.id, now: now())
        return .ok(.init(body: .json(.init(count: count))))
    }

    /// The filters cairn uses (checksum, ids, albums, tags, type, visibility, favourite, trash) with Immich's
    /// defaults: trashed assets only when asked for, locked ones only by explicit visibility.
    func searchAssets(_ input: Operations.SearchAssets.Input) async throws -> Operations.SearchAssets.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        let size = dto.size ?? 250
        let page = dto.page ?? 1
        guard (1...1000).contains(size), page >= 1 else {
            throw ImmichError.validation(["size: must be 1...1000, page: must be at least 1"])
        }
        var matches = await store.ownedAssets(user.id).filter { Self.matches($0, dto) }
        matches.sort { dto.order == .asc ? $0.fileCreatedAt < $1.fileCreatedAt : $0.fileCreatedAt > $1.fileCreatedAt }
        let start = min((page - 1) * size, matches.count)
        let slice = Array(matches[start..<min(start + size, matches.count)])
        var items: [Components.Schemas.AssetResponseDto] = []
        for asset in slice { items.append(await wire(asset)) }
        let assets = Components.Schemas.SearchAssetResponseDto(
            count: items.count, facets: [], items: items,
            nextPage: start + size < matches.count ? String(page + 1) : nil, total: matches.count)
        let albums = Components.Schemas.SearchAlbumResponseDto(count: 0, facets: [], items: [], total: 0)
        return .ok(.init(body: .json(.init(albums: albums, assets: assets))))
    }

    static func matches(_ asset: Asset, _ dto: Components.Schemas.MetadataSearchDto) -> Bool {
        if let checksum = dto.checksum {
            guard let digest = ChecksumText.digest(checksum), digest == asset.checksum else { return false }
        }
        if let id = dto.id, id.lowercased() != asset.id { return false }
        if let name = dto.originalFileName, !asset.originalFileName.localizedCaseInsensitiveContains(name) { return false }
        if let type = dto._type, type != asset.type { return false }
        if let favorite = dto.isFavorite, favorite != asset.isFavorite { return false }
        // No visibility asked: `not-locked` for a session without elevated permission, which an API key never
        // has (`server/src/services/search.service.ts` `searchMetadata`, `utils/database.ts` `searchAssetBuilder`):
        // hidden assets (a Live Photo's movie) are found, locked ones are not.
        if let visibility = dto.visibility {
            if visibility != asset.visibility { return false }
        } else if asset.visibility == .locked {
            return false
        }
        if let albumIds = dto.albumIds, !albumIds.allSatisfy({ asset.albumIds.contains($0.lowercased()) }) { return false }
        if let tagIds = dto.tagIds, !tagIds.allSatisfy({ asset.tagIds.contains($0.lowercased()) }) { return false }
        let trashFilter = dto.trashedAfter != nil || dto.trashedBefore != nil
        if asset.isTrashed, !(dto.withDeleted ?? false), !trashFilter { return false }
        if trashFilter {
            guard let deletedAt = asset.deletedAt else { return false }
            if let after = dto.trashedAfter, deletedAt < after { return false }
            if let before = dto.trashedBefore, deletedAt > before { return false }
        }
        if let after = dto.takenAfter, asset.fileCreatedAt < after { return false }
        if let before = dto.takenBefore, asset.fileCreatedAt > before { return false }
        if let after = dto.createdAfter, asset.createdAt < after { return false }
        if let before = dto.createdBefore, asset.createdAt > before { return false }
        if let after = dto.updatedAfter, asset.updatedAt < after { return false }
        if let before = dto.updatedBefore, asset.updatedAt > before { return false }
        return true
    }
}
