import CairnCore
import CairnTesting
import Testing

@testable import CairnPipeline

/// The progress tracker's id set answers as `Set` does, for runs of consecutive ids, scattered ones and negatives.
@Suite struct ItemIDSetTests {
    @Test func itAnswersAsASetDoes() {
        var generator = SplitMix64(seed: 63)
        var bits = ItemIDSet()
        var reference = Set<ItemID>()
        var inserts: [Int64] = Array(1 ... 3000) + Array(510 ... 530)  // consecutive, and again across a block edge
        for _ in 0 ..< 3000 { inserts.append(Int64(bitPattern: generator.next()) >> Int64.random(in: 1 ... 60, using: &generator)) }
        inserts += [0, -1, -512, -513, Int64.max, Int64.min]
        for value in inserts {
            let id = ItemID(value)
            #expect(bits.insert(id) == reference.insert(id).inserted, "\(value)")
        }
        #expect(bits.count == reference.count)
        for value in inserts + [3001, 531, -2, 4_000_000_000] {
            #expect(bits.contains(ItemID(value)) == reference.contains(ItemID(value)), "\(value)")
        }
    }
}
