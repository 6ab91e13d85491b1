import CairnCore
import Foundation

/// An Immich API key. It is printed as `***` wherever it is interpolated, so a log line, error or dump that
/// reaches it by accident still shows nothing; the one place that reads the value is the header middleware.
public struct ImmichAPIKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let value: String

    public init?(_ value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        self.value = trimmed
    }

    public var description: String { "***" }
    public var debugDescription: String { "***" }

    /// The key from a file of its own (its first line; surrounding space ignored). A file that other users may read
    /// gives a warning (returned, for the caller to print): anyone on the machine could take over the account.
    public static func read(file path: String) throws(ImmichAPIKeyError) -> (key: ImmichAPIKey, warning: String?) {
        let secret: SecretFile
        do { secret = try SecretFile(path: path) } catch { throw ImmichAPIKeyError(path: path, reason: error.description) }
        guard let key = ImmichAPIKey(secret.value) else { throw ImmichAPIKeyError(path: path, reason: "is empty") }
        let warning = secret.othersMayRead
            ? "the Immich API key file \(path) can be read by other users; make it private: chmod 600 \(path)" : nil
        return (key, warning)
    }
}

public struct ImmichAPIKeyError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "Immich API key file \(path): \(reason)" }
}
