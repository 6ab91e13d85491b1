import Foundation
import ImmichAPI
import OpenAPIRuntime

/// Who and what cairn is talking to: checked at the start of every run, before any file is looked at.
public struct ImmichIdentity: Sendable, Hashable {
    public var serverVersion: ImmichVersion
    public var userID: String
    public var email: String
    public var name: String
    /// The API key's permissions (`all`, or names such as `asset.upload`); nil when the server did not say.
    public var permissions: Set<String>?
    /// The file name extensions the server takes (lowercased, dot included: `.jpg`), from `GET /server/media-types`;
    /// empty when it did not say.
    public var mediaExtensions: Set<String> = []

    /// Of `needed`, the permissions the key lacks (none when the server did not say what it has).
    public func missingPermissions(_ needed: Set<String>) -> Set<String> {
        guard let permissions, !permissions.contains("all") else { return [] }
        return needed.subtracting(permissions)
    }
}

public struct ImmichVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int

    /// The oldest API cairn speaks: v3 changed the upload's fields (integer durations, dates with offsets).
    public static let oldestSupported = ImmichVersion(major: 3, minor: 0, patch: 0)

    public var description: String { "\(major).\(minor).\(patch)" }

    public static func < (lhs: ImmichVersion, rhs: ImmichVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }
}

extension ImmichClient {
    /// Pings the server, checks its version and finds the key's user. A server too old, unreachable or refusing
    /// the key fails with a message that says which.
    public func connect() async throws(ImmichFailure) -> ImmichIdentity {
        try await perform("reach the server", { try await api.pingServer() }) { _ = try $0.ok }
        let version = try await perform("read the server version", { try await api.getServerVersion() }) {
            let body = try $0.ok.body.json
            return ImmichVersion(major: body.major, minor: body.minor, patch: body.patch)
        }
        guard version >= .oldestSupported else {
            throw ImmichFailure(
                kind: .permanent, operation: "connect",
                message: "the server runs Immich \(version); cairn needs Immich \(ImmichVersion.oldestSupported) or "
                    + "newer (its upload API changed in v3): upgrade the server")
        }
        let user = try await perform("identify the API key's user", { try await api.getMyUser() }) { try $0.ok.body.json }
        var identity = ImmichIdentity(serverVersion: version, userID: user.id, email: user.email, name: user.name)
        identity.permissions = try await keyPermissions()
        identity.mediaExtensions = try await mediaExtensions()
        return identity
    }

    /// The key's permissions (`GET /api-keys/me`, which asks for none); nil when the server cannot say.
    func keyPermissions() async throws(ImmichFailure) -> Set<String>? {
        do throws(ImmichFailure) {
            return try await perform("read the API key's permissions", { try await api.getMyApiKey() }) {
                Set(try $0.ok.body.json.permissions.map(\.rawValue))
            }
        } catch where error.kind == .permanent && error.status != nil { return nil }
    }

    /// The extensions the server takes (`GET /server/media-types`); empty when it cannot say.
    func mediaExtensions() async throws(ImmichFailure) -> Set<String> {
        do throws(ImmichFailure) {
            return try await perform("read the server's media types", { try await api.getSupportedMediaTypes() }) {
                let types = try $0.ok.body.json
                return Set((types.image + types.video).map { $0.lowercased() })
            }
        } catch where error.kind == .permanent && error.status != nil { return [] }
    }

    /// A documented body read back: its shape is the spec's, so a mismatch means it is not Immich's answer (a
    /// failure `read` throws itself, a refusal in a 200's body, stands).
    static func json<Value>(_ operation: String, _ read: () throws -> Value) throws(ImmichFailure) -> Value {
        do { return try read() } catch let failure as ImmichFailure { throw failure } catch {
            throw ImmichFailure(kind: .permanent, operation: operation,
                                message: "the server answered in a form Immich's API does not use")
        }
    }
}
