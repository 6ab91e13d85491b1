import CairnCore
@testable import CairnPipeline
import CairnTesting
import Testing

@Suite("Record writer", .timeLimit(.minutes(1)))
struct RecordWriterTests {
    /// A record that marks its item in flight in the thumbnail lane, which waits for its mark.
    static func marking(_ id: Int64) -> ItemMove {
        ItemMove(ItemRecord(item: item(id), state: .thumbnailing, inFlight: true))
    }

    @Test("marks that come while marks gather are saved ahead in one save")
    func marksGatherIntoOneSave() async throws {
        let store = InMemoryItemStateStore()
        // Full saves wait an hour for more records: only the path ahead saves anything here.
        let writer = RecordWriter(store: store, linger: .seconds(3600), maxBatch: 4096, markLinger: .seconds(2)) { _ in }
        let running = Task { await writer.run() }
        writer.enqueue(Self.marking(1))
        while !writer.isGatheringMarks { await Task.yield() }
        writer.enqueue(Self.marking(2))
        let last = writer.enqueue(Self.marking(3))
        try await writer.waitMarked(last)
        #expect(await store.markSaves == 1)
        #expect(await store.marksSavedAhead == 3)
        #expect(await store.record(ItemID(2)) == nil, "a mark's item is not saved whole by the path ahead")
        writer.close()
        await running.value
        #expect(await store.markSaves == 1)
    }
}
