import Foundation
import ImmichAPI
import OpenAPIRuntime

extension ImmichDouble {
    /// `POST /stacks`: 201 with the new stack. Real server: `server/src/controllers/stack.controller.ts` (the key
    /// needs `stack.create`, asked by ImmichRules), then `server/src/services/stack.service.ts` `create`: the ids
    /// pass `requireAccess` with `asset.update` (the caller's own assets, all or nothing; the key's permissions are
    /// not asked again) before `stack.repository.ts` `create` stacks them.
    func createStack(_ input: Operations.CreateStack.Input) async throws -> Operations.CreateStack.Output {
        let user = try RequestScope.requireUser()
        guard case .json(let dto) = input.body else { throw ImmichError.badRequest("Expected JSON") }
        let problems = Self.stackProblems(dto.assetIds)
        guard problems.isEmpty else { throw ImmichError.validation(problems) }
        let ids = dto.assetIds.map { $0.lowercased() }
        try await store.requireAccess(ids, owner: user.id, permission: "asset.update")
        let (stack, members) = await store.createStack(ids, owner: user.id, now: now())
        // `stack.dto.ts` `mapStack` maps its assets without owner, tags or stack (the repository loads neither).
        let assets = members.map { Wire.asset($0, owner: nil, tags: nil, stack: nil, startedAt: startedAt) }
        return .created(.init(body: .json(.init(assets: assets, id: stack.id, primaryAssetId: stack.primaryAssetId))))
    }

    /// `server/src/dtos/stack.dto.ts` `StackCreateDto`: every id a version-4 UUID, at least two of them; each
    /// problem listed, Zod-style (the element problems first, then the count).
    static func stackProblems(_ ids: [String]) -> [String] {
        var problems = ids.enumerated().compactMap { index, id in isUUIDv4(id) ? nil : "assetIds.\(index): Invalid UUID" }
        if ids.count < 2 { problems.append("assetIds: Too small: expected array to have >=2 items") }
        return problems
    }

    /// The spec's pattern for a `uuidv4`: 8-4-4-4-12 hex digits, version nibble 4, variant 8, 9, a or b.
    static func isUUIDv4(_ text: String) -> Bool {
        let chars = Array(text.utf8)
        guard chars.count == 36 else { return false }
        for (index, char) in chars.enumerated() {
            switch index {
            case 8, 13, 18, 23: guard char == UInt8(ascii: "-") else { return false }
            case 14: guard char == UInt8(ascii: "4") else { return false }
            case 19: guard "89abAB".utf8.contains(char) else { return false }
            default: guard "0123456789abcdefABCDEF".utf8.contains(char) else { return false }
            }
        }
        return true
    }
}

extension Store {
    /// Real server: `server/src/repositories/stack.repository.ts` `create`, in one transaction: the caller's stacks
    /// whose primary is among `ids` are deleted and their members that are not trashed join the new stack (their
    /// trashed ones are left in none, `asset.table.ts` `stackId` being `ON DELETE SET NULL`); `ids[0]` becomes the
    /// primary; every id and joined member gets the new stack id and `updatedAt` now, leaving any other stack it was in.
    /// Answers the stack and its members as `withAssets` reads them: not trashed, timeline or archive
    /// (`utils/database.ts` `withDefaultVisibility`), the primary first (`stack.dto.ts` `mapStack`).
    func createStack(_ ids: [String], owner: String, now: Date) -> (AssetStack, [Asset]) {
        var union: [String] = []
        for id in ids where !union.contains(id) { union.append(id) }
        let merged = Set(stacks.values.filter { $0.ownerId == owner && union.contains($0.primaryAssetId) }.map(\.id))
        if !merged.isEmpty {
            for id in assetOrder {
                guard let asset = assets[id], let stackId = asset.stackId, merged.contains(stackId) else { continue }
                assets[id]?.stackId = nil
                if !asset.isTrashed, !union.contains(id) { union.append(id) }
            }
            for stackId in merged { stacks[stackId] = nil }
        }
        let stack = AssetStack(id: UUID().uuidString.lowercased(), ownerId: owner, primaryAssetId: ids.first ?? "")
        stacks[stack.id] = stack
        for id in union where assets[id] != nil {
            assets[id]?.stackId = stack.id
            assets[id]?.updatedAt = now
        }
        let members = union.compactMap { assets[$0] }
            .filter { !$0.isTrashed && ($0.visibility == .timeline || $0.visibility == .archive) }
        return (stack, members.filter { $0.id == stack.primaryAssetId } + members.filter { $0.id != stack.primaryAssetId })
    }

    /// The `stack` of `GET`/`PUT /assets/{id}` (`asset.service.ts` `get` maps with `withStack`): real server
    /// `server/src/dtos/asset-response.dto.ts` `mapStack` over `asset.repository.ts` `getById`, which loads the
    /// stack's other members that are neither trashed nor off the timeline; none of them, no stack (null);
    /// `assetCount` is them plus the primary.
    func stackSummary(of asset: Asset) -> Components.Schemas.AssetStackResponseDto? {
        guard let stackId = asset.stackId, let stack = stacks[stackId] else { return nil }
        let others = assetOrder.reduce(0) { count, id in
            guard let member = assets[id], member.stackId == stackId, member.id != stack.primaryAssetId,
                  !member.isTrashed, member.visibility == .timeline else { return count }
            return count + 1
        }
        guard others > 0 else { return nil }
        return .init(assetCount: others + 1, id: stack.id, primaryAssetId: stack.primaryAssetId)
    }

    /// Before asset `id` is deleted for good. Real server: `server/src/services/asset.service.ts`
    /// `handleAssetDeletion`: counting the stack's timeline members besides the primary and this asset, plus the
    /// primary unless it is this asset, fewer than two left dissolve the stack (its members in none); else a deleted
    /// primary hands over to the first other member.
    func releaseStack(of id: String) {
        guard let stackId = assets[id]?.stackId, let stack = stacks[stackId] else { return }
        let others = assetOrder.filter { other in
            guard other != id, other != stack.primaryAssetId, let member = assets[other] else { return false }
            return member.stackId == stackId && member.visibility == .timeline
        }
        if others.count + (stack.primaryAssetId == id ? 0 : 1) < 2 {
            stacks[stackId] = nil
            for other in assetOrder where assets[other]?.stackId == stackId { assets[other]?.stackId = nil }
        } else if stack.primaryAssetId == id, let first = others.first {
            stacks[stackId]?.primaryAssetId = first
        }
    }
}
