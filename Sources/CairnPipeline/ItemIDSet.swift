import CairnCore

/// A set of item ids kept as bits, 512 ids a block. The ids a run registers are mostly consecutive (an import's new
/// items are numbered as they are planned), so a million of them take some hundreds of kilobytes, where a `Set`
/// holds a slot of 8 bytes per id at three-quarters full, and both tables while it doubles: the largest thing an
/// import of a million files kept in memory. Scattered ids cost a block each, still a few dozen bytes.
struct ItemIDSet: Sendable {
    private var blocks: [Int64: InlineArray<8, UInt64>] = [:]
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    func contains(_ id: ItemID) -> Bool {
        let (block, word, bit) = Self.position(of: id)
        guard let words = blocks[block] else { return false }
        return words[word] & bit != 0
    }

    /// Adds `id`; whether it was not there before.
    @discardableResult
    mutating func insert(_ id: ItemID) -> Bool {
        let (block, word, bit) = Self.position(of: id)
        var words = blocks[block] ?? InlineArray(repeating: 0)
        guard words[word] & bit == 0 else { return false }
        words[word] |= bit
        blocks[block] = words
        count += 1
        return true
    }

    private static func position(of id: ItemID) -> (block: Int64, word: Int, bit: UInt64) {
        let offset = Int(id.rawValue & 511)  // the arithmetic shift below floors, so negatives fall in place too
        return (id.rawValue >> 9, offset >> 6, 1 << UInt64(offset & 63))
    }
}
