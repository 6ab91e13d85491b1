/// How busy one pipeline lane is right now: `busy` of `width` slots, `queued` waiting for one (phases started ahead of
/// the runners, items in its backlog and inbox, due retries, and items it finished that wait for room downstream).
public struct LaneOccupancy: Codable, Sendable, Hashable {
    public var name: String
    public var busy: Int
    public var width: Int
    public var queued: Int
    /// The source files (relative paths, in no order) whose phase in this lane is in flight, at most `width` of them; nil
    /// where the lane's holder does not say (a queue's lanes).
    public var holding: [String]?

    public init(name: String, busy: Int, width: Int, queued: Int = 0, holding: [String]? = nil) {
        self.name = name; self.busy = busy; self.width = width; self.queued = queued; self.holding = holding
    }
}
