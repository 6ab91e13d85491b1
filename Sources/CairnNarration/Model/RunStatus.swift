import Foundation

/// Where a library's syncing stands, as `cairn status` and the live view say it.
public enum RunStatus: Sendable, Equatable {
    case idle
    case syncing
    case success
    case failed(message: String, needsAuth: Bool)

    public var name: String {
        switch self {
        case .idle: return "idle"
        case .syncing: return "syncing"
        case .success: return "success"
        case .failed: return "failed"
        }
    }
}

extension RunStatus: Codable {
    enum CodingKeys: String, CodingKey { case state, message, needsAuth }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let state = try container.decode(String.self, forKey: .state)
        switch state {
        case "idle": self = .idle
        case "syncing": self = .syncing
        case "success": self = .success
        case "failed":
            self = .failed(
                message: try container.decodeIfPresent(String.self, forKey: .message) ?? "",
                needsAuth: try container.decodeIfPresent(Bool.self, forKey: .needsAuth) ?? false)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .state, in: container, debugDescription: "unknown run status: \(state)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .state)
        if case .failed(let message, let needsAuth) = self {
            try container.encode(message, forKey: .message)
            try container.encode(needsAuth, forKey: .needsAuth)
        }
    }
}
