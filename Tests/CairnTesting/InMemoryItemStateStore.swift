import CairnCore
import CairnPipeline

/// A store in memory: records by id plus every saved record in order, for the scheduler's tests.
public actor InMemoryItemStateStore: ItemStateStore {
    public private(set) var records: [ItemID: ItemRecord] = [:]
    /// Every record ever saved, in save order.
    public private(set) var history: [ItemRecord] = []
    /// What each item's phases made, in save order (saved with the moves that carried it).
    public private(set) var products: [ItemID: [any StageProducts]] = [:]
    /// Number of `save` calls (batches).
    public private(set) var batchCount = 0
    /// Marks set by `saveMarks` (they are not in `history`).
    public private(set) var marksSavedAhead = 0
    /// Number of `saveMarks` calls.
    public private(set) var markSaves = 0
    private var failure: (any Error)?
    /// Who waits for a number of batches (`waitForBatches`).
    private var batchWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    public init(_ records: [ItemRecord] = []) {
        for record in records { self.records[record.id] = record }
    }

    public func save(_ batch: [ItemMove]) async throws {
        if let failure { throw failure }
        batchCount += 1
        for move in batch {
            records[move.record.id] = move.record
            history.append(move.record)
            if let made = move.products { products[move.record.id, default: []].append(made) }
        }
        let reached = batchWaiters.filter { $0.count <= batchCount }
        batchWaiters.removeAll { $0.count <= batchCount }
        for waiter in reached { waiter.continuation.resume() }
    }

    /// Returns once `count` batches have been saved: woken by the save that makes them, never by polling (a test
    /// that spun here held a thread the scheduler it waits for needed).
    public func waitForBatches(_ count: Int) async {
        guard batchCount < count else { return }
        await withCheckedContinuation { batchWaiters.append((count, $0)) }
    }

    public func saveMarks(_ marks: [InFlightMark]) async throws {
        if let failure { throw failure }
        markSaves += 1
        marksSavedAhead += marks.count
        for mark in marks {
            records[mark.id]?.inFlight = true
            records[mark.id]?.runsAlone = mark.alone
        }
    }

    /// Makes every later `save` and `saveMarks` throw `error` (simulates a full disk).
    public func failSaves(with error: any Error) {
        failure = error
    }

    public func record(_ id: ItemID) -> ItemRecord? { records[id] }

    /// Records a new run should take: every item not finished, in id order.
    public func unfinished() -> [ItemRecord] {
        records.values.filter { !$0.state.isTerminal || $0.inFlight }.sorted { $0.id < $1.id }
    }

    /// Every record in id order.
    public func all() -> [ItemRecord] { records.values.sorted { $0.id < $1.id } }

    /// The distinct states an item was saved in, in order.
    public func states(of id: ItemID) -> [ItemState] {
        var result = [ItemState]()
        for record in history where record.id == id && result.last != record.state { result.append(record.state) }
        return result
    }
}
