/// Progress of one phase at one instant; what a renderer draws and what `progress` events carry.
public struct ProgressSnapshot: Codable, Sendable, Equatable {
    public var completed: Int
    /// Absent until the total is known (indeterminate progress).
    public var total: Int?
    public var bytesCompleted: Int64
    public var bytesTotal: Int64?
    /// 0…1; absent while indeterminate. Never decreases within a phase.
    public var fraction: Double?
    public var itemsPerSecond: Double?
    public var bytesPerSecond: Double?
    /// Absent until the rate is stable.
    public var etaSeconds: Double?
}
