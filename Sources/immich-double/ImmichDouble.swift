import Foundation
import ImmichAPI
import OpenAPIRuntime

/// The double's implementation of the generated server protocol; one extension per concern (server, upload,
/// assets, tags and albums). The caller is `RequestScope.user`, set by ImmichRules from the API key.
struct ImmichDouble: APIProtocol {
    let store: Store
    let users: Users
    let version: (major: Int, minor: Int, patch: Int, prerelease: Int?)
    let startedAt: Date

    init(store: Store, users: Users, version: String, startedAt: Date = Date()) {
        self.store = store
        self.users = users
        self.version = Self.parseVersion(version)
        // Whole seconds, so every date the double sends has one spelling.
        self.startedAt = Date(timeIntervalSince1970: startedAt.timeIntervalSince1970.rounded(.down))
    }

    /// "3.0.3" or "v3.1.0-rc.2" → (3, 0, 3, nil) or (3, 1, 0, 2).
    static func parseVersion(_ text: String) -> (major: Int, minor: Int, patch: Int, prerelease: Int?) {
        let trimmed = text.hasPrefix("v") ? String(text.dropFirst()) : text
        let halves = trimmed.split(separator: "-", maxSplits: 1)
        let numbers = (halves.first ?? "").split(separator: ".").map { Int($0) ?? 0 }
        let prerelease = halves.count > 1 ? halves[1].split(separator: ".").compactMap { Int($0) }.last : nil
        func at(_ index: Int) -> Int { index < numbers.count ? numbers[index] : 0 }
        return (at(0), at(1), at(2), prerelease)
    }

    // MARK: Server and user

    func pingServer(_ input: Operations.PingServer.Input) async throws -> Operations.PingServer.Output {
        .ok(.init(body: .json(.init(res: "pong"))))
    }

    func getServerVersion(_ input: Operations.GetServerVersion.Input) async throws -> Operations.GetServerVersion.Output {
        .ok(.init(body: .json(.init(major: version.major, minor: version.minor, patch: version.patch,
                                    prerelease: version.prerelease))))
    }

    /// Real server: `server/src/services/server.service.ts` `getSupportedMediaTypes`: the extensions of
    /// `mime-types.ts`, dot included, in its order.
    func getSupportedMediaTypes(_ input: Operations.GetSupportedMediaTypes.Input) async throws
        -> Operations.GetSupportedMediaTypes.Output {
        .ok(.init(body: .json(.init(image: ImmichMediaTypes.image, sidecar: ImmichMediaTypes.sidecar,
                                    video: ImmichMediaTypes.video))))
    }

    /// Real server: `server/src/services/api-key.service.ts` `getMine`: the calling key, its permissions included.
    func getMyApiKey(_ input: Operations.GetMyApiKey.Input) async throws -> Operations.GetMyApiKey.Output {
        let user = try RequestScope.requireUser()
        let permissions = user.permissions.compactMap(Components.Schemas.Permission.init(rawValue:))
        return .ok(.init(body: .json(.init(createdAt: startedAt, id: User.stableUUID("immich-double key \(user.key)"),
                                           name: "cairn", permissions: permissions, updatedAt: startedAt))))
    }

    func getMyUser(_ input: Operations.GetMyUser.Input) async throws -> Operations.GetMyUser.Output {
        let user = try RequestScope.requireUser()
        let usage = await store.ownedAssets(user.id).reduce(0) { $0 + $1.bytes }
        return .ok(.init(body: .json(Wire.userAdmin(user, usage: usage, startedAt: startedAt))))
    }

    /// An instant with whole milliseconds, as Immich's database keeps them.
    func now() -> Date {
        Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    /// `withStack`: the asset's stack summary, as `GET` and `PUT /assets/{id}` answer it (Stacks.swift).
    func wire(_ asset: Asset, withStack: Bool = false) async -> Components.Schemas.AssetResponseDto {
        let tags = await store.tags(asset.tagIds)
        let stack = withStack ? await store.stackSummary(of: asset) : nil
        return Wire.asset(asset, owner: users.user(id: asset.ownerId), tags: tags, stack: stack, startedAt: startedAt)
    }
}
