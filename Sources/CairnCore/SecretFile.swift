import Foundation

/// A secret kept in a file of its own (an API key, a bearer token): its first line, surrounding space ignored.
/// Whether other users may read the file is told too, for the caller to warn: anyone on the machine could use it.
public struct SecretFile: Sendable {
    public let value: String
    public let othersMayRead: Bool

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case unreadable
        case empty

        public var description: String {
            switch self {
            case .unreadable: return "no such file, or it cannot be read"
            case .empty: return "is empty"
            }
        }
    }

    public init(path: String) throws(Failure) {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let data = FileManager.default.contents(atPath: path) else { throw .unreadable }
        let firstLine = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first ?? ""
        let trimmed = firstLine.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw .empty }
        value = trimmed
        othersMayRead = ((attributes[.posixPermissions] as? NSNumber)?.uint16Value ?? 0) & 0o044 != 0
    }
}
