import CairnCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The errors Immich (NestJS) answers with, in its JSON shape: `{"message", "error", "statusCode"}`, where a
/// validation failure's message is a list (Zod-style). Thrown from handlers; ImmichRules turns them into responses.
enum ImmichError: Error, HTTPResponseConvertible {
    case unauthorized
    /// Immich's answer for an id that does not exist or is not the caller's.
    case noAccess(permission: String)
    case badRequest(String)
    case validation([String])
    case other(status: HTTPResponse.Status, messages: [String])

    static var noAccess: ImmichError { .noAccess(permission: "asset.read") }

    var httpStatus: HTTPResponse.Status {
        switch self {
        case .unauthorized: .unauthorized
        case .noAccess, .badRequest, .validation: .badRequest
        case .other(let status, _): status
        }
    }

    private var message: Message {
        switch self {
        case .unauthorized: .text("Invalid API key")
        case .noAccess(let permission): .text("Not found or no \(permission) access")
        case .badRequest(let text): .text(text)
        case .validation(let list): .list(list)
        case .other(_, let list): list.count == 1 ? .text(list[0]) : .list(list)
        }
    }

    var httpHeaderFields: HTTPFields { [.contentType: "application/json; charset=utf-8"] }

    var httpBody: HTTPBody? { HTTPBody(Self.body(status: httpStatus, message: message)) }

    var response: (HTTPResponse, HTTPBody?) { (HTTPResponse(status: httpStatus, headerFields: httpHeaderFields), httpBody) }

    /// Nest's body for an error; a 500 carries no `error` name, as Nest's default exception filter does.
    static func body(status: HTTPResponse.Status, message: Message) -> Data {
        struct Body: Encodable {
            var message: Message
            var error: String?
            var statusCode: Int
        }
        let name = status.code >= 500 ? nil : status.reasonPhrase
        return (try? Timestamp.jsonEncoder().encode(Body(message: message, error: name, statusCode: status.code))) ?? Data()
    }

    enum Message: Encodable {
        case text(String)
        case list([String])

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .list(let list): try container.encode(list)
            }
        }
    }
}
