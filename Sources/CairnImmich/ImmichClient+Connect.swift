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

    public init(major: Int, minor: Int, patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

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
        try await withRetries("reach the server") { () throws(ImmichFailure) in
            let output = try await call("reach the server") { try await api.pingServer() }
            switch output {
            case .ok: return ()
            case .undocumented(let status, let payload):
                throw await Self.undocumented(status, payload, operation: "reach the server")
            }
        }
        let version = try await withRetries("read the server version") { () throws(ImmichFailure) in
            let output = try await call("read the server version") { try await api.getServerVersion() }
            switch output {
            case .ok(let ok):
                let body = try Self.json("read the server version") { try ok.body.json }
                return ImmichVersion(major: body.major, minor: body.minor, patch: body.patch)
            case .undocumented(let status, let payload):
                throw await Self.undocumented(status, payload, operation: "read the server version")
            }
        }
        guard version >= .oldestSupported else {
            throw ImmichFailure(
                kind: .permanent, operation: "connect",
                message: "the server runs Immich \(version); cairn needs Immich \(ImmichVersion.oldestSupported) or "
                    + "newer (its upload API changed in v3): upgrade the server")
        }
        let user = try await withRetries("identify the API key's user") { () throws(ImmichFailure) in
            let output = try await call("identify the API key's user") { try await api.getMyUser() }
            switch output {
            case .ok(let ok): return try Self.json("identify the API key's user") { try ok.body.json }
            case .undocumented(let status, let payload):
                throw await Self.undocumented(status, payload, operation: "identify the API key's user")
            }
        }
        var identity = ImmichIdentity(serverVersion: version, userID: user.id, email: user.email, name: user.name)
        identity.permissions = try await keyPermissions()
        identity.mediaExtensions = try await mediaExtensions()
        return identity
    }

    /// The key's permissions (`GET /api-keys/me`, which asks for none); nil when the server cannot say.
    func keyPermissions() async throws(ImmichFailure) -> Set<String>? {
        try await withRetries("read the API key's permissions") { () throws(ImmichFailure) -> Set<String>? in
            let output = try await call("read the API key's permissions") { try await api.getMyApiKey() }
            switch output {
            case .ok(let ok):
                return Set(try Self.json("read the API key's permissions") { try ok.body.json.permissions.map(\.rawValue) })
            case .undocumented(let status, let payload):
                let failure = await Self.undocumented(status, payload, operation: "read the API key's permissions")
                guard failure.kind == .permanent else { throw failure }
                return nil
            }
        }
    }

    /// The extensions the server takes (`GET /server/media-types`); empty when it cannot say.
    func mediaExtensions() async throws(ImmichFailure) -> Set<String> {
        try await withRetries("read the server's media types") { () throws(ImmichFailure) -> Set<String> in
            let output = try await call("read the server's media types") { try await api.getSupportedMediaTypes() }
            switch output {
            case .ok(let ok):
                let types = try Self.json("read the server's media types") { try ok.body.json }
                return Set((types.image + types.video).map { $0.lowercased() })
            case .undocumented(let status, let payload):
                let failure = await Self.undocumented(status, payload, operation: "read the server's media types")
                guard failure.kind == .permanent else { throw failure }
                return []
            }
        }
    }

    /// A documented body read back: its shape is the spec's, so a mismatch means it is not Immich's answer.
    static func json<Value>(_ operation: String, _ read: () throws -> Value) throws(ImmichFailure) -> Value {
        do { return try read() } catch {
            throw ImmichFailure(kind: .permanent, operation: operation,
                                message: "the server answered in a form Immich's API does not use")
        }
    }
}
