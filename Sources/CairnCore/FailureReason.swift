/// Why one file failed, as a value: the operation that failed (a system call, a decoder step), when one is named,
/// and the reason. It never names the file: whoever holds the failure knows the file and names it once, where it
/// prints the line. Stored and serialised as that printed text (`description`).
public struct FailureReason: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var operation: String?
    public var reason: String

    public init(operation: String? = nil, _ reason: String) {
        self.operation = operation
        self.reason = reason
    }

    public init(stringLiteral reason: String) { self.init(reason) }

    public var description: String { operation.map { "\($0): \(reason)" } ?? reason }
}

extension FailureReason: Codable {
    /// Read back from its text: the operation is then part of `reason`, which prints the same.
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension SystemCallError {
    /// The call and the system's reason, without the file.
    public var failure: FailureReason { FailureReason(operation: operation, reason) }
}
