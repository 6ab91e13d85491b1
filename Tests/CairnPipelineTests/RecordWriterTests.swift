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

/// Stale marks: a full save carrying an item's older record must not leave the store reading the item as idle
/// while the phase its newer mark is for runs.
@Suite("Record writer's marks and full saves", .timeLimit(.minutes(1)))
struct RecordWriterMarkOrderTests {
    /// A record of an item between phases (its metadata's, not in flight), older than its thumbnail's mark.
    static func between(_ id: Int64) -> ItemMove {
        ItemMove(ItemRecord(item: item(id), state: .probing))
    }

    @Test("a full save of a record older than a mark saved ahead saves the item as in flight")
    func olderRecordKeepsTheMark() async throws {
        let store = GatedItemStateStore()
        // One record a save: the item's older record and its mark go in separate saves.
        let writer = RecordWriter(store: store, linger: .zero, maxBatch: 1) { _ in }
        let running = Task { await writer.run() }
        writer.enqueue(Self.between(99))
        await store.waitForSaveToBegin()
        let older = writer.enqueue(Self.between(1))
        let mark = writer.enqueue(RecordWriterTests.marking(1))
        try await writer.waitMarked(mark)
        await store.open()
        try await writer.waitCommitted(older)
        let saved = try #require(await store.inner.history.first { $0.id == ItemID(1) })
        #expect(saved.state == .probing)
        #expect(saved.inFlight, "the older record's save would clear the mark saved ahead")
        #expect(await store.inner.record(ItemID(1))?.inFlight == true)
        writer.close()
        await running.value
    }

    @Test("a mark saved while a full save of its item's older record runs is saved again after it")
    func markOvertakenDuringASaveIsSavedAgain() async throws {
        let store = GatedItemStateStore()
        let writer = RecordWriter(store: store, linger: .zero, maxBatch: 4096) { _ in }
        let running = Task { await writer.run() }
        let older = writer.enqueue(Self.between(1))
        await store.waitForSaveToBegin()
        // The full save has its batch (the older record) and waits at the gate; the mark goes ahead of it.
        let mark = writer.enqueue(RecordWriterTests.marking(1))
        try await writer.waitMarked(mark)
        #expect(await store.inner.markSaves == 1)
        await store.open()
        try await writer.waitCommitted(older)
        #expect(await store.inner.markSaves == 2, "the mark is saved again once the older record is in")
        #expect(await store.inner.record(ItemID(1))?.inFlight == true)
        writer.close()
        await running.value
        #expect(await store.inner.record(ItemID(1))?.inFlight == true)
    }
}

/// A store whose full saves wait at a gate until `open` (marks go straight through), so a test can land marks
/// while a full save is in progress.
actor GatedItemStateStore: ItemStateStore {
    let inner = InMemoryItemStateStore()
    private var isOpen = false
    private var waitingSave: CheckedContinuation<Void, Never>?
    private var saveBegan: CheckedContinuation<Void, Never>?
    private var began = false

    func save(_ moves: [ItemMove]) async throws {
        if !isOpen {
            began = true
            saveBegan?.resume()
            saveBegan = nil
            await withCheckedContinuation { waitingSave = $0 }
        }
        try await inner.save(moves)
    }

    func saveMarks(_ marks: [InFlightMark]) async throws {
        try await inner.saveMarks(marks)
    }

    /// Returns once a full save waits at the gate.
    func waitForSaveToBegin() async {
        if began { return }
        await withCheckedContinuation { saveBegan = $0 }
    }

    /// Lets the waiting full save, and every later one, through.
    func open() {
        isOpen = true
        waitingSave?.resume()
        waitingSave = nil
    }
}

@Suite("Batch queue")
struct BatchQueueTests {
    @Test("batches leave oldest first, each at most the limit, in the order the elements came")
    func batchesInOrder() {
        var queue = BatchQueue<Int>(limit: 4)
        #expect(queue.takeBatch().isEmpty)
        for value in 0..<10 { queue.append(value) }
        #expect(queue.count == 10)
        #expect(queue.takeBatch() == [0, 1, 2, 3])
        #expect(queue.count == 6)
        // An element that comes after a batch left joins the last batch, not a new one.
        queue.append(10)
        #expect(queue.takeBatch() == [4, 5, 6, 7])
        #expect(queue.takeBatch() == [8, 9, 10])
        #expect(queue.isEmpty)
        #expect(queue.takeBatch().isEmpty)
    }

    @Test("a limit below one takes one element a batch")
    func limitOfAtLeastOne() {
        var queue = BatchQueue<Int>(limit: 0)
        queue.append(1)
        queue.append(2)
        #expect(queue.takeBatch() == [1])
        #expect(queue.takeBatch() == [2])
    }
}
