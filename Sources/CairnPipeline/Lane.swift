import CairnCore

/// One stage of an item's import, and the lane of workers that runs it.
///
/// An item passes through the lanes in declaration order; synthesis only for stills when clips are on.
public enum Lane: String, CaseIterable, Codable, Sendable, Comparable {
    /// Copy into the library with hash-while-copy verification.
    case transfer
    /// Probe the media; results go into the catalog.
    case metadata
    /// Thumbnail and preview from one decode.
    case thumbnail
    /// A short clip from a still; the lowest-priority lane.
    case synthesis

    /// The state an item is in while this lane owes it work.
    public var activeState: ItemState {
        switch self {
        case .transfer: return .transferring
        case .metadata: return .probing
        case .thumbnail: return .thumbnailing
        case .synthesis: return .synthesizing
        }
    }

    /// The lane after this one on `route`, or nil when the item is then ready.
    public func next(on route: ItemRoute) -> Lane? {
        switch self {
        case .transfer: return .metadata
        case .metadata: return .thumbnail
        case .thumbnail: return route.includesSynthesis ? .synthesis : nil
        case .synthesis: return nil
        }
    }

    var index: Int {
        switch self {
        case .transfer: return 0
        case .metadata: return 1
        case .thumbnail: return 2
        case .synthesis: return 3
        }
    }

    public static func < (lhs: Lane, rhs: Lane) -> Bool { lhs.index < rhs.index }
}

/// Which lanes an item passes through: every item takes transfer, metadata and thumbnail;
/// only stills take synthesis, and only when clips are switched on.
public struct ItemRoute: Hashable, Sendable {
    public var includesSynthesis: Bool

    public init(includesSynthesis: Bool) {
        self.includesSynthesis = includesSynthesis
    }

    public init(kind: MediaKind, clipsEnabled: Bool) {
        self.includesSynthesis = kind == .photo && clipsEnabled
    }

    public static let withClip = ItemRoute(includesSynthesis: true)
    public static let withoutClip = ItemRoute(includesSynthesis: false)

    /// The lanes of this route, in order.
    public var lanes: [Lane] {
        includesSynthesis ? Lane.allCases : [.transfer, .metadata, .thumbnail]
    }
}
