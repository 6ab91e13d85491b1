/// A first-in first-out queue kept as batches of at most `limit` elements, for a consumer that takes a batch at a
/// time: the oldest batch leaves whole, without a copy, and the queue's buffers stay the size of what it holds (one
/// array would keep the capacity of its longest moment, twice that while it grows, for as long as it lives).
struct BatchQueue<Element: Sendable>: Sendable {
    let limit: Int
    /// Oldest first; every batch but the last holds `limit` elements.
    private var batches: [[Element]] = []
    private(set) var count = 0

    init(limit: Int) { self.limit = max(1, limit) }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element) {
        if batches.last.map({ $0.count >= limit }) ?? true {
            batches.append([])
        }
        batches[batches.count - 1].append(element)
        count += 1
    }

    /// The oldest batch (`limit` elements, or all there are if fewer), taken out.
    mutating func takeBatch() -> [Element] {
        guard !batches.isEmpty else { return [] }
        let batch = batches.removeFirst()
        count -= batch.count
        return batch
    }
}
