import CairnCore

/// Identity of an item in the store (the catalog's row id).
public struct ItemID: RawRepresentable, Hashable, Comparable, Codable, Sendable, ExpressibleByIntegerLiteral,
    CustomStringConvertible
{
    public var rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public init(integerLiteral value: Int64) { self.rawValue = value }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public static func < (lhs: ItemID, rhs: ItemID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "#\(rawValue)" }
}

/// What the stages need to know about one file to import; the same value is handed to every stage.
public struct ImportItem: Hashable, Codable, Sendable {
    public var id: ItemID
    /// Path relative to the source root, as reports and messages show it.
    public var relativePath: String
    public var kind: MediaKind
    /// Size of the source file; scales the transfer timeout and weighs transfer progress.
    public var byteCount: Int64
    /// Known when the hashing phase ran before import.
    public var checksum: Checksum?

    public init(id: ItemID, relativePath: String, kind: MediaKind, byteCount: Int64, checksum: Checksum? = nil) {
        self.id = id
        self.relativePath = relativePath
        self.kind = kind
        self.byteCount = byteCount
        self.checksum = checksum
    }
}
