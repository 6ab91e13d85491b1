/// Why one file failed, as a value: the operation that failed (a system call, a decoder step), when one is named,
/// the reason, and its category. It never names the file: whoever holds the failure knows the file and names it
/// once, where it prints the line. Serialised as the printed text (`description`); the category is stored and
/// written beside it, in a field of its own, since nothing reads it back out of the text.
public struct FailureReason: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var operation: String?
    public var reason: String
    public var category: FailureCategory

    public init(operation: String? = nil, _ reason: String, category: FailureCategory = .other) {
        self.operation = operation
        self.reason = reason
        self.category = category
    }

    public init(stringLiteral reason: String) { self.init(reason) }

    public var description: String { operation.map { "\($0): \(reason)" } ?? reason }
}

extension FailureReason: Codable {
    /// Read back from its text: the operation is then part of `reason`, which prints the same; the category, kept
    /// apart, is `other` until its holder sets it.
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
    public var failure: FailureReason { FailureReason(operation: operation, reason, category: FailureCategory(code)) }
}

/// An error that knows what failed as a value, its category included (a system call's, a decoder's, a server's).
public protocol FailureDescribing: Error {
    var failure: FailureReason { get }
}

extension SystemCallError: FailureDescribing {}

extension FailureReason {
    /// `error` as a failure: its own when it describes one, else its text, in no category.
    public init(_ error: any Error) {
        self = (error as? any FailureDescribing)?.failure ?? FailureReason("\(error)")
    }
}
