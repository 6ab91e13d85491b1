import CairnCore
import Foundation
import HTTPTypes

/// A request Immich did not carry out, in the three classes a run acts on. The spec documents only the success
/// responses; everything else (validation 400s, 401, a proxy's 413, 429, 5xx, a dropped connection) arrives
/// undocumented and is classified here, once, with the server's own message when it sent one.
public struct ImmichFailure: FailureDescribing, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Worth trying again after a pause: 5xx, 429, 408, a reset or a timeout.
        case retryable
        /// The key is wrong, revoked or lacks a permission: the run stops, nothing is lost, the user acts.
        case needsAuth
        /// The same request will fail again: a validation error, a 413 from a size limit, a missing asset.
        case permanent
    }

    public var kind: Kind
    /// What cairn asked for, in words ("upload", "check which files the server has").
    public var operation: String
    /// The HTTP status, when the server answered at all.
    public var status: Int?
    /// Why, in the server's words when it gave any (never the request's headers: the key is not in here).
    public var message: String
    /// How long the server asked to be left alone (429/503 `Retry-After`).
    public var retryAfter: Duration?
    /// The connection was lost after the request went out: the server may have carried it out. An upload in this
    /// state is settled by asking for its checksum, never by sending the body again blindly.
    public var outcomeUnknown: Bool
    /// The category an item failed by this is counted in: by default the credentials (`auth`), a server's answer
    /// (`server`) or none at all (`network`); a failure on cairn's side names its own.
    public var category: FailureCategory

    public init(kind: Kind, operation: String, status: Int? = nil, message: String, retryAfter: Duration? = nil,
                outcomeUnknown: Bool = false, category: FailureCategory? = nil) {
        self.kind = kind
        self.operation = operation
        self.status = status
        self.message = message
        self.retryAfter = retryAfter
        self.outcomeUnknown = outcomeUnknown
        self.category = category ?? {
            if kind == .needsAuth { return .auth }
            if status != nil { return .server }
            return kind == .retryable ? .network : .other
        }()
    }

    public var description: String {
        let code = status.map { "HTTP \($0): " } ?? ""
        return "Immich: cannot \(operation): \(code)\(message)"
    }

    /// The failure as an item's reason: the operation, then the status and the server's words.
    public var failure: FailureReason {
        FailureReason(operation: "immich \(operation)", (status.map { "HTTP \($0): " } ?? "") + message,
                      category: category)
    }

    /// The class of an answer with `status` and (part of) its body.
    public static func classify(status: Int, body: String, retryAfter: String?, operation: String) -> ImmichFailure {
        let message = serverMessage(body) ?? HTTPStatusText.phrase(status)
        switch status {
        case 401, 403:
            return ImmichFailure(kind: .needsAuth, operation: operation, status: status,
                                 message: "\(message) (check the API key and its permissions)")
        case 413:
            return ImmichFailure(kind: .permanent, operation: operation, status: status,
                                 message: "the request is larger than the server or a proxy in front of it accepts (a "
                                     + "request-size limit such as nginx's client_max_body_size or Cloudflare's 100 MB)")
        case 408, 429, 500...599:
            return ImmichFailure(kind: .retryable, operation: operation, status: status, message: message,
                                 retryAfter: retryAfter.flatMap(parseRetryAfter))
        default:
            return ImmichFailure(kind: .permanent, operation: operation, status: status, message: message)
        }
    }

    /// Immich's error bodies: `{"message": "…" | ["…", …], "error": "…", "statusCode": N}`.
    static func serverMessage(_ body: String) -> String? {
        guard let data = body.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            let trimmed = body.trimmingCharacters(in: .whitespacesAndNewlines)
            // A proxy's HTML page says nothing a user can act on beyond its status.
            return trimmed.isEmpty || trimmed.hasPrefix("<") ? nil : String(trimmed.prefix(300))
        }
        if let text = object["message"] as? String { return text }
        if let list = object["message"] as? [String] { return list.joined(separator: "; ") }
        return object["error"] as? String
    }

    /// `Retry-After` in seconds (the date form is rare from Immich and its proxies; it is read as no hint).
    static func parseRetryAfter(_ text: String) -> Duration? {
        guard let seconds = Int(text.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return .seconds(seconds)
    }
}

enum HTTPStatusText {
    /// The reason phrase of a status Immich or a proxy in front of it answers with, as a person reads it.
    static func phrase(_ status: Int) -> String {
        let known: [HTTPResponse.Status] = [.badRequest, .unauthorized, .forbidden, .notFound, .requestTimeout,
                                            .tooManyRequests, .internalServerError, .badGateway, .serviceUnavailable,
                                            .gatewayTimeout]
        return known.first { $0.code == status }?.reasonPhrase.lowercased() ?? "unexpected status"
    }
}
