import CairnCore

extension Lane {
    /// The lane after this one on `route`, or nil when the item is then ready.
    public func next(on route: ItemRoute) -> Lane? {
        switch self {
        case .transfer: return route.endsAfterTransfer ? nil : .metadata
        case .metadata: return .thumbnail
        case .thumbnail: return route.includesSynthesis ? .synthesis : nil
        case .synthesis: return nil
        }
    }

    /// Whether a phase's work waits until its in-flight mark is committed. The mark is how the crash-loop guard
    /// finds a file that kills the worker, so the lanes that decode content wait for it. The transfer decodes
    /// nothing (it copies with `read` and `write`), so no file's content can crash it; and when marks were saved
    /// with the rest, a copy that waited for its mark waited for the previous batch's sync and transaction, so each
    /// group commit covered two or three items (5,423 syncs for an archive-only import of 10,000 small files). Not
    /// waiting, copies go on during a commit and the next one takes all of them. (The marks of the lanes that wait
    /// are now saved ahead of the group commits: `RecordWriter`.)
    public var waitsForInFlightMark: Bool { self != .transfer }

    /// Whether the lane's work decodes content (and so holds frames while it runs): every lane but the transfer.
    public var decodes: Bool { self != .transfer }

    /// Phases started ahead of the runners when nothing says otherwise (`LaneSettings.ahead`): as many as run, in
    /// a lane whose phases wait for their marks; none in the transfer, which has nothing to wait for.
    public func defaultAhead(forWidth width: Int) -> Int { waitsForInFlightMark ? width : 0 }
}

/// Which lanes an item passes through: every item takes transfer, metadata and thumbnail;
/// only stills take synthesis, and only when clips are switched on.
///
/// With derivatives off (`--derivatives off`, archive only) an item takes the transfer lane alone in this run:
/// it then waits in the state it owes next (probing), and a later run with derivatives on takes it from there.
public struct ItemRoute: Hashable, Sendable {
    public var includesSynthesis: Bool
    public var includesDerivatives: Bool
    /// The destination makes its own thumbnails and reads its own metadata (an Immich server): the transfer
    /// (the upload) is the item's whole route, and it is ready after it.
    public var endsAfterTransfer = false

    public init(includesSynthesis: Bool, includesDerivatives: Bool = true) {
        self.includesSynthesis = includesSynthesis
        self.includesDerivatives = includesDerivatives
    }

    public init(kind: MediaKind, clipsEnabled: Bool, derivativesEnabled: Bool = true) {
        self.includesSynthesis = kind == .photo && clipsEnabled
        self.includesDerivatives = derivativesEnabled
    }

    /// Whether this run works on `lane` for the item (the item's whole route may be longer).
    public func runsInThisRun(_ lane: Lane) -> Bool {
        includesDerivatives || lane == .transfer
    }

    public static let withClip = ItemRoute(includesSynthesis: true)

    /// The lanes this run takes the item through, in order.
    public var lanes: [Lane] {
        guard includesDerivatives, !endsAfterTransfer else { return [.transfer] }
        return includesSynthesis ? Lane.allCases : [.transfer, .metadata, .thumbnail]
    }
}
