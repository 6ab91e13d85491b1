/// What a file's media work is estimated to hold at its peak, per phase that decodes or encodes it, in bytes: made
/// from its probe (dimensions, format, bit depth, the sizes the derivatives need), so the scheduler can admit the
/// phase against the run's `MemoryBudget` before it starts.
public struct MemoryFootprint: Codable, Sendable, Hashable {
    /// The thumbnail phase: one decode, the thumbnail and the preview made from it.
    public var thumbnail: Int64
    /// The synthesis phase: the still decoded again at the clip's size, and the clip's encoder.
    public var clip: Int64

    public init(thumbnail: Int64, clip: Int64) {
        self.thumbnail = thumbnail
        self.clip = clip
    }

    /// The estimate for `lane`, nil for the lanes it does not cover (the transfer and the probe).
    public func bytes(in lane: Lane) -> Int64? {
        switch lane {
        case .thumbnail: return thumbnail
        case .synthesis: return clip
        case .transfer, .metadata: return nil
        }
    }
}
