import AsyncHTTPClient
import Foundation
import NIOCore

/// Sends an exposition to a Prometheus Pushgateway, grouped by job and library only: never an instance or a pid,
/// so each run replaces the previous run's group instead of adding one.
public struct Pushgateway: Sendable {
    public let url: String
    /// The address as messages print it: without a user or password it may carry.
    public let displayURL: String

    public init(url: String) throws(PushgatewayError) {
        guard var parts = URLComponents(string: url), let scheme = parts.scheme, ["http", "https"].contains(scheme),
              parts.host?.isEmpty == false else {
            throw PushgatewayError(message: "not an http(s) URL of a Pushgateway")
        }
        self.url = url.hasSuffix("/") ? String(url.dropLast()) : url
        parts.user = nil
        parts.password = nil
        displayURL = parts.string ?? "the Pushgateway"
    }

    /// The group's address: `<url>/metrics/job/cairn/library/<library>`.
    public func groupURL(library: String) -> String {
        let name = library.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "library"
        return "\(url)/metrics/job/cairn/library/\(name.isEmpty ? "library" : name)"
    }

    /// Replaces the group's metrics with `text` (HTTP PUT); fails after `timeout`.
    public func push(_ text: String, library: String, timeout: Duration = .seconds(10)) async throws {
        var request = HTTPClientRequest(url: groupURL(library: library))
        request.method = .PUT
        request.headers.add(name: "Content-Type", value: "text/plain; version=0.0.4")
        request.body = .bytes(ByteBuffer(string: text))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(timeout.components.seconds)))
        let body = try await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(Int(response.status.code)) else {
            throw PushgatewayError(message: "\(displayURL): the Pushgateway answered \(response.status.code): "
                                   + String(buffer: body).prefix(200))
        }
    }
}

public struct PushgatewayError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}
