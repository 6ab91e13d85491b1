/// A fixed-capacity buffer that keeps the newest `capacity` elements, overwriting the oldest.
///
/// Appending never allocates once full, so the activity feed costs the same on hour ten as on second one.
public struct RingBuffer<Element: Sendable>: Sendable {
    public let capacity: Int
    private var storage: [Element] = []
    /// Index of the oldest element once `storage` is full.
    private var oldest = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a ring buffer needs room for at least one element")
        self.capacity = capacity
        storage.reserveCapacity(capacity)
    }

    public var count: Int { storage.count }

    public mutating func append(_ element: Element) {
        if storage.count < capacity {
            storage.append(element)
        } else {
            storage[oldest] = element
            oldest = (oldest + 1) % capacity
        }
    }

    /// Every element, newest first.
    public var newestFirst: [Element] {
        var result: [Element] = []
        result.reserveCapacity(storage.count)
        var index = (oldest + storage.count - 1) % max(storage.count, 1)
        for _ in 0..<storage.count {
            result.append(storage[index])
            index = (index - 1 + storage.count) % storage.count
        }
        return result
    }
}
