/// A first-in first-out queue with O(1) amortized push and pop (arrays pop the front in O(n)).
struct FIFO<Element>: Sendable where Element: Sendable {
    private var storage: [Element] = []
    private var head = 0

    init(_ elements: [Element] = []) { storage = elements }

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    var first: Element? { head < storage.count ? storage[head] : nil }

    var elements: ArraySlice<Element> { storage[head...] }
}
