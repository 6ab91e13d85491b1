import Foundation

/// One line of the activity feed: "03:20:15  hashed  IMG_4612.HEIC".
public struct ActivityEntry: Codable, Sendable, Equatable {
    public var time: Date
    public var kind: NarrationEvent.Kind
    public var detail: String

    public init(time: Date, kind: NarrationEvent.Kind, detail: String) {
        self.time = time; self.kind = kind; self.detail = detail
    }
}

/// The newest activity of a run, newest first; capped so a long run stays cheap.
public struct ActivityFeed: Sendable {
    public static let defaultCapacity = 50
    private var buffer: RingBuffer<ActivityEntry>

    public init(capacity: Int = ActivityFeed.defaultCapacity) {
        buffer = RingBuffer(capacity: capacity)
    }

    public mutating func append(_ entry: ActivityEntry) { buffer.append(entry) }
    public var entries: [ActivityEntry] { buffer.newestFirst }
    public func newest(_ limit: Int) -> [ActivityEntry] { buffer.newest(limit) }
    public var count: Int { buffer.count }
    public var capacity: Int { buffer.capacity }
    public mutating func removeAll() { buffer.removeAll() }
}
