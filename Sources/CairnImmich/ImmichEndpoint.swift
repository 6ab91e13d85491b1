import Foundation

/// Where an Immich server's API lives. Users copy the address from their browser or from Immich's docs, with or
/// without the `/api` suffix and a trailing slash; every form names the same endpoint, so cairn's state for it
/// (partitioned by this value) is found again whichever form the next run is given.
public struct ImmichEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// The API's base, always ending in `/api` (no trailing slash): what the generated client is given.
    public let apiURL: URL

    public init(_ text: String) throws(ImmichEndpointError) {
        var trimmed = text.trimmingCharacters(in: .whitespaces)
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let parsed = URLComponents(string: trimmed), let scheme = parsed.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = parsed.host, !host.isEmpty else {
            throw ImmichEndpointError(text: text)
        }
        var components = parsed
        components.scheme = scheme
        components.host = host.lowercased()
        components.query = nil
        components.fragment = nil
        if !components.path.hasSuffix("/api") { components.path += "/api" }
        guard let url = components.url else { throw ImmichEndpointError(text: text) }
        apiURL = url
    }

    /// The form shown to users and stored in the catalog: the API base without credentials (a URL never carries
    /// the key, but a user may paste `user:password@`; it is dropped here, never echoed).
    public var description: String {
        guard var components = URLComponents(url: apiURL, resolvingAgainstBaseURL: false) else { return "immich" }
        components.user = nil
        components.password = nil
        return components.string ?? "immich"
    }
}

public struct ImmichEndpointError: Error, CustomStringConvertible {
    public var text: String
    public var description: String {
        "not an Immich server address: expected http(s)://HOST[:PORT][/api], for example https://photos.example.com"
    }
}
