/// How busy one pipeline lane is right now: `busy` of `width` slots, `queued` waiting in its inbox.
public struct LaneOccupancy: Codable, Sendable, Equatable {
    public var name: String
    public var busy: Int
    public var width: Int
    public var queued: Int

    public init(name: String, busy: Int, width: Int, queued: Int = 0) {
        self.name = name; self.busy = busy; self.width = width; self.queued = queued
    }
}
