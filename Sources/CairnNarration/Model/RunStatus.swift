import CairnCore
import Foundation

/// Where a library's syncing stands, as `cairn status` and the live view say it.
public enum RunStatus: Sendable, Equatable {
    case idle
    case syncing
    /// The newest run ended: how, why when it did not succeed, and whether credentials are what is missing.
    case ended(RunOutcome, message: String?, needsAuth: Bool)

    public static let success = RunStatus.ended(.success, message: nil, needsAuth: false)

    /// A run that did not do its whole job, for a reason a person reads.
    public static func failed(message: String, needsAuth: Bool = false) -> RunStatus {
        .ended(.failed, message: message, needsAuth: needsAuth)
    }

    /// How the run ended; nil while idle or running.
    public var outcome: RunOutcome? {
        if case .ended(let outcome, _, _) = self { return outcome }
        return nil
    }

    /// The `state` field: `idle`, `syncing`, `success`, or `failed` for any other ending.
    public var name: String {
        switch self {
        case .idle: return "idle"
        case .syncing: return "syncing"
        case .ended(let outcome, _, _): return outcome == .success ? "success" : "failed"
        }
    }
}

extension RunStatus: Codable {
    enum CodingKeys: String, CodingKey { case state, outcome, message, needsAuth }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let state = try container.decode(String.self, forKey: .state)
        switch state {
        case "idle": self = .idle
        case "syncing": self = .syncing
        case "success", "failed":
            // Summaries written before `outcome` existed say only `success` or `failed`.
            let outcome = try container.decodeIfPresent(RunOutcome.self, forKey: .outcome)
                ?? (state == "success" ? .success : .failed)
            self = .ended(outcome, message: try container.decodeIfPresent(String.self, forKey: .message),
                          needsAuth: try container.decodeIfPresent(Bool.self, forKey: .needsAuth) ?? false)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .state, in: container, debugDescription: "unknown run status: \(state)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .state)
        guard case .ended(let outcome, let message, let needsAuth) = self else { return }
        try container.encode(outcome, forKey: .outcome)
        if outcome != .success {
            try container.encode(message ?? "", forKey: .message)
            try container.encode(needsAuth, forKey: .needsAuth)
        }
    }
}
