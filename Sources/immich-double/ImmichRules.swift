import Foundation
import HTTPTypes
import OpenAPIRuntime

/// What each request carries into the generated handlers, which see neither the API key nor the traffic log.
enum RequestScope {
    @TaskLocal static var user: User?
    @TaskLocal static var traffic: TrafficRecord?

    static func requireUser() throws -> User {
        guard let user else { throw ImmichError.unauthorized }
        return user
    }
}

/// The Immich behaviour around the generated stubs: the API key (the stubs take no security input), Nest-shaped
/// errors for whatever the stubs or handlers throw, and the nulls Immich always sends.
struct ImmichRules: ServerMiddleware {
    let users: Users
    static let publicOperations: Set<String> = ["pingServer", "getServerVersion", "getSupportedMediaTypes"]

    /// The permission each operation asks of an API key: the `x-immich-permission` of each operation in Immich's
    /// spec (`Sources/ImmichAPI/openapi.yaml`; a test holds the two equal), enforced as the real server's
    /// `server/src/services/auth.service.ts` `authenticate` does (403 "Missing required permission: X"). `getMyApiKey`
    /// asks none (`api-key.controller.ts`: `@Authenticated({ permission: false })`).
    static let permissions: [String: String] = [
        "getMyUser": "user.read", "checkBulkUpload": "asset.upload", "uploadAsset": "asset.upload",
        "updateAsset": "asset.update", "getAssetInfo": "asset.read", "deleteAssets": "asset.delete",
        "restoreAssets": "asset.delete", "upsertTags": "tag.create", "bulkTagAssets": "tag.asset",
        "getAllAlbums": "album.read", "createAlbum": "album.create", "addAssetsToAlbums": "albumAsset.create",
        "searchAssets": "asset.read", "createStack": "stack.create",
    ]
    static let apiKeyHeader = HTTPField.Name("x-api-key")!

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // Nest answers its API routes in JSON whatever `Accept` says (`GET /api/server/ping` with `text/html` is
        // 200 `{"res":"pong"}`); the generated stubs would refuse an Accept they cannot serve with 406.
        var request = request
        request.headerFields[.accept] = nil
        var user: User?
        if !Self.publicOperations.contains(operationID) {
            guard let key = request.headerFields[Self.apiKeyHeader], let known = users.user(forKey: key) else {
                return ImmichError.unauthorized.response
            }
            if let permission = Self.permissions[operationID], !known.isGranted(permission) {
                return ImmichError.other(status: .forbidden, messages: ["Missing required permission: \(permission)"]).response
            }
            user = known
        }
        let body = operationID == "uploadAsset"
            ? PartTypeRelaxer.relax(body, contentType: request.headerFields[.contentType]) : body
        do {
            let (response, responseBody) = try await RequestScope.$user.withValue(user) {
                try await next(request, body, metadata)
            }
            return try await NullFill.apply(operationID: operationID, response: response, body: responseBody)
        } catch let error as ServerError {
            return Self.response(for: error)
        }
    }

    /// A handler's ImmichError as it is; the stubs' own failures (bad JSON, missing multipart parts) as Nest would.
    static func response(for error: ServerError) -> (HTTPResponse, HTTPBody?) {
        if let immich = error.underlyingError as? ImmichError { return immich.response }
        let status = error.httpStatus
        if status.code >= 500 {
            return ImmichError.other(status: status, messages: ["Internal server error"]).response
        }
        return ImmichError.other(status: status, messages: [error.causeDescription]).response
    }
}

/// The generated Codable types leave a nil optional out, but Immich sends `null` for its required nullable fields
/// (the spec marks them required); this puts them back, per operation, so responses validate against the spec.
enum NullFill {
    indirect enum Shape: Sendable {
        case object(nulls: [String], children: [String: Shape])
        case array(Shape)
    }

    static let asset = Shape.object(nulls: ["duration", "height", "width", "thumbhash"], children: [:])
    /// An asset mapped `withStack` (`asset.service.ts` `get`): `stack` is null when it is in none.
    static let assetWithStack = Shape.object(nulls: ["duration", "height", "width", "thumbhash", "stack"], children: [:])
    static let album = Shape.object(nulls: ["albumThumbnailAssetId"], children: [:])
    static let shapes: [String: Shape] = [
        "getAssetInfo": assetWithStack,
        "updateAsset": assetWithStack,
        "createStack": .object(nulls: [], children: ["assets": .array(asset)]),
        "getAllAlbums": .array(album),
        "createAlbum": album,
        "getMyUser": .object(
            nulls: ["deletedAt", "license", "quotaSizeInBytes", "quotaUsageInBytes", "storageLabel"], children: [:]),
        "getServerVersion": .object(nulls: ["prerelease"], children: [:]),
        "searchAssets": .object(nulls: [], children: [
            "assets": .object(nulls: ["nextPage"], children: ["items": .array(asset)]),
            "albums": .object(nulls: [], children: ["items": .array(album)]),
        ]),
    ]

    static func apply(operationID: String, response: HTTPResponse, body: HTTPBody?) async throws -> (HTTPResponse, HTTPBody?) {
        guard let shape = shapes[operationID], let body, response.status.kind == .successful else { return (response, body) }
        let data = try await Data(collecting: body, upTo: 64 << 20)
        guard let json = try? JSONSerialization.jsonObject(with: data) else { return (response, HTTPBody(data)) }
        let filled = fill(json, shape)
        let out = try JSONSerialization.data(withJSONObject: filled, options: [.sortedKeys, .withoutEscapingSlashes])
        // The stub set Content-Length for the body it encoded.
        var response = response
        response.headerFields[.contentLength] = String(out.count)
        return (response, HTTPBody(out))
    }

    static func fill(_ value: Any, _ shape: Shape) -> Any {
        switch shape {
        case .array(let element):
            guard let list = value as? [Any] else { return value }
            return list.map { fill($0, element) }
        case .object(let nulls, let children):
            guard var object = value as? [String: Any] else { return value }
            for key in nulls where object[key] == nil { object[key] = NSNull() }
            for (key, child) in children { if let inner = object[key] { object[key] = fill(inner, child) } }
            return object
        }
    }
}
