import CairnCore

/// The first checksum ever seen at each source path (first write wins).
///
/// While its path lives, the anchor is protected: editing a kept photo must never schedule its
/// original for trashing. When the path dies, the anchor is released into quarantine with the
/// path's current content.
public struct EditAnchors: Codable, Sendable, Equatable {
    public private(set) var byPath: [String: Checksum]

    public init(_ byPath: [String: Checksum] = [:]) { self.byPath = byPath }

    public subscript(path: String) -> Checksum? { byPath[path] }

    /// Records `checksum` as the anchor of `path` unless it already has one; returns whether it was recorded.
    @discardableResult
    public mutating func record(_ checksum: Checksum, at path: String) -> Bool {
        guard byPath[path] == nil else { return false }
        byPath[path] = checksum
        return true
    }

    public mutating func release(_ paths: some Sequence<String>) {
        for path in paths { byPath[path] = nil }
    }

    /// Anchors of the paths in `livePaths`: the checksums no deletion may touch.
    public func protected(livePaths: some Sequence<String>) -> Set<Checksum> {
        var result = Set<Checksum>()
        for path in livePaths { if let anchor = byPath[path] { result.insert(anchor) } }
        return result
    }
}
