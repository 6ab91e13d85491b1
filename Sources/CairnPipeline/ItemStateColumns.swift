/// An `ItemState` flattened into the columns a table stores: state name, phase, reason, attempts, retryable.
public struct ItemStateColumns: Hashable, Codable, Sendable {
    public var state: String
    /// Set for `failed` only.
    public var phase: String?
    /// Set for `failed` only.
    public var reason: String?
    public var attempts: Int
    public var retryable: Bool

    public init(state: String, phase: String? = nil, reason: String? = nil, attempts: Int = 0, retryable: Bool = false) {
        self.state = state
        self.phase = phase
        self.reason = reason
        self.attempts = attempts
        self.retryable = retryable
    }
}

/// Columns that name no valid state, e.g. after a hand edit of the catalog.
public struct InvalidItemStateColumns: Error, CustomStringConvertible {
    public var columns: ItemStateColumns
    public var description: String {
        "invalid item state in the store: state=\(columns.state) phase=\(columns.phase ?? "null")"
    }
}

extension ItemState {
    public var columns: ItemStateColumns {
        if case .failed(let failure) = self {
            return ItemStateColumns(state: name.rawValue, phase: failure.phase.rawValue, reason: failure.reason,
                                    attempts: failure.attempts, retryable: failure.retryable)
        }
        return ItemStateColumns(state: name.rawValue)
    }

    public init(columns: ItemStateColumns) throws(InvalidItemStateColumns) {
        guard let name = Name(rawValue: columns.state) else { throw InvalidItemStateColumns(columns: columns) }
        switch name {
        case .placeholder: self = .placeholder
        case .queued: self = .queued
        case .transferring: self = .transferring
        case .probing: self = .probing
        case .thumbnailing: self = .thumbnailing
        case .synthesizing: self = .synthesizing
        case .ready: self = .ready
        case .cancelled: self = .cancelled
        case .failed:
            guard let phaseText = columns.phase, let phase = Lane(rawValue: phaseText) else {
                throw InvalidItemStateColumns(columns: columns)
            }
            self = .failed(ItemFailure(phase: phase, reason: columns.reason ?? "", attempts: columns.attempts,
                                       retryable: columns.retryable))
        }
    }
}

extension ItemState: Codable {
    public init(from decoder: any Decoder) throws {
        let columns = try ItemStateColumns(from: decoder)
        do {
            try self.init(columns: columns)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try columns.encode(to: encoder)
    }
}
