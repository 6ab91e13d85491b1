import CairnCore

/// The one writer of item records: saves them in order, batching whatever piled up during the previous save (at
/// most `maxBatch` records a transaction, so a run that queues thousands at once never converts them all at once).
///
/// The scheduler enqueues without waiting (its state changes stay synchronous); a phase that must not start
/// before its in-flight mark is saved awaits `waitMarked`. Those marks also go down a fast path of their own
/// (`ItemStateStore.saveMarks`): a full save makes the files its rows point at durable first (a whole file
/// system's sync in the catalog's store), and a decoding phase that waited for that sync left its core idle. A
/// mark saved ahead only sets the item's in-flight flag, never its state, so it claims nothing about files; and a
/// full save starts only when no mark saved ahead is still in progress, so no mark can land after a later record
/// of its item and leave a stale flag. The other way round, a full save whose batch holds an item's record older
/// than a mark of its saves that record as in flight (the mark is the newer fact), and marks it again afterwards if
/// a mark of its own batch's items landed while it ran; either way the store never reads an item as idle while its
/// marked phase runs, which the crash-loop guard relies on. Where each save of marks is a round trip to a server,
/// marks gather for `markLinger` first (`PipelineConfiguration.markLinger`).
final class RecordWriter: Sendable {
    private struct State {
        var pending: BatchQueue<ItemMove>
        var enqueued: UInt64 = 0
        var committed: UInt64 = 0
        /// Marks to save ahead, with their sequence numbers, oldest first.
        var marks: [(sequence: UInt64, mark: InFlightMark)] = []
        /// Marks saved ahead and not yet covered by `committed`, by sequence.
        var savedAhead: [UInt64: InFlightMark] = [:]
        /// The marks of the save ahead in progress, if one is.
        var savingMarks: [(sequence: UInt64, mark: InFlightMark)]?
        var isSavingMarks: Bool { savingMarks != nil }
        var failure: (any Error)?
        var waiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Waiting for full saves (`waitCommitted`), not for marks ahead.
        var commitWaiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// A full save waiting for the marks' save in progress to end.
        var fullSaveWaiting: CheckedContinuation<Void, Never>?
        var idleDrainer: CheckedContinuation<Void, Never>?
        var idleMarker: CheckedContinuation<Void, Never>?
        /// The drainer's wait for more records (`linger`), cut short on close or once a batch is full.
        var lingering: Wakeup?
        /// The wait for more marks (`markLinger`), cut short on close.
        var gatheringMarks: Wakeup?
        var closed = false

        func isSaved(_ sequence: UInt64) -> Bool { sequence <= committed || savedAhead[sequence] != nil }

        /// The newest mark after `sequence` of each item, among those saved ahead, being saved and still queued.
        func marksAfter(_ sequence: UInt64) -> [ItemID: (sequence: UInt64, mark: InFlightMark)] {
            var newest: [ItemID: (sequence: UInt64, mark: InFlightMark)] = [:]
            let all = savedAhead.map { (sequence: $0.key, mark: $0.value) } + (savingMarks ?? []) + marks
            for entry in all where entry.sequence > sequence {
                if let known = newest[entry.mark.id], known.sequence > entry.sequence { continue }
                newest[entry.mark.id] = entry
            }
            return newest
        }

        /// The waiters whose marks are now saved, taken out.
        mutating func takeReadyWaiters() -> [CheckedContinuation<Void, any Error>] {
            var ready: [CheckedContinuation<Void, any Error>] = []
            var still: [(sequence: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
            for waiter in waiters {
                if isSaved(waiter.sequence) { ready.append(waiter.continuation) } else { still.append(waiter) }
            }
            waiters = still
            var stillCommitting: [(sequence: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
            for waiter in commitWaiters {
                if waiter.sequence <= committed { ready.append(waiter.continuation) } else { stillCommitting.append(waiter) }
            }
            commitWaiters = stillCommitting
            return ready
        }
    }

    private let store: any ItemStateStore
    private let linger: Duration
    private let markLinger: Duration
    /// The most records a full save takes (`PipelineConfiguration.commitBatchRecords`).
    let maxBatch: Int
    private let locked: Locked<State>
    private let onFailure: @Sendable (any Error) async -> Void

    /// - Parameters:
    ///   - linger: how long a full save that found less than `maxBatch` records waits for more before it takes
    ///     them (`PipelineConfiguration.commitLinger`).
    ///   - maxBatch: the most records one full save takes (`PipelineConfiguration.commitBatchRecords`).
    ///   - markLinger: how long marks gather before they are saved ahead (`PipelineConfiguration.markLinger`).
    init(store: any ItemStateStore, linger: Duration, maxBatch: Int, markLinger: Duration = .zero,
         onFailure: @escaping @Sendable (any Error) async -> Void) {
        self.store = store
        self.linger = linger
        self.markLinger = markLinger
        self.maxBatch = max(1, maxBatch)
        self.onFailure = onFailure
        locked = Locked(State(pending: BatchQueue(limit: self.maxBatch)))
    }

    /// Saves records as they come, until closed and every queued record is saved (or the store failed); the
    /// scheduler runs it as a child of its run.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.drain() }
            group.addTask { await self.saveMarksAhead() }
        }
    }

    /// Queues `move`; returns its sequence number for `waitMarked`. A record that marks its item in flight for
    /// a phase that waits for the mark (`Lane.waitsForInFlightMark`) is also saved ahead.
    @discardableResult
    func enqueue(_ move: ItemMove) -> UInt64 {
        let record = move.record
        let isAwaitedMark = record.inFlight && record.state.activeLane?.waitsForInFlightMark == true
        let (sequence, drainer, marker, lingering) = locked.withLock { state in
            state.pending.append(move)
            state.enqueued += 1
            var marker: CheckedContinuation<Void, Never>?
            if isAwaitedMark {
                state.marks.append((state.enqueued, InFlightMark(id: record.id, alone: record.runsAlone)))
                marker = state.idleMarker
                state.idleMarker = nil
            }
            var lingering: Wakeup?
            if state.pending.count >= maxBatch {
                lingering = state.lingering
                state.lingering = nil
            }
            defer { state.idleDrainer = nil }
            return (state.enqueued, state.idleDrainer, marker, lingering)
        }
        drainer?.resume()
        marker?.resume()
        lingering?.signal()
        return sequence
    }

    /// Returns once the mark enqueued as `sequence` is saved (ahead, or with every record up to it); throws the
    /// store's error if saving failed. Only marks are waited for: an item's records before its mark are saved in
    /// order, later, and a phase never needs them on disk to start.
    func waitMarked(_ sequence: UInt64) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enum Decision { case done, failed(any Error), wait }
            let decision: Decision = locked.withLock { state in
                if state.isSaved(sequence) { return .done }
                if let failure = state.failure { return .failed(failure) }
                state.waiters.append((sequence, continuation))
                return .wait
            }
            switch decision {
            case .done: continuation.resume()
            case .failed(let error): continuation.resume(throwing: error)
            case .wait: break
            }
        }
    }

    /// Returns once every record up to `sequence` is saved by a full save (a mark saved ahead is not enough), cutting
    /// the drainer's linger short; throws the store's error if saving failed. A crash suspect's phase waits for this,
    /// so that no other item's mark is left standing, stale, while the suspect runs alone.
    func waitCommitted(_ sequence: UInt64) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enum Decision { case done, failed(any Error), wait(Wakeup?) }
            let decision: Decision = locked.withLock { state in
                if sequence <= state.committed { return .done }
                if let failure = state.failure { return .failed(failure) }
                state.commitWaiters.append((sequence, continuation))
                defer { state.lingering = nil }
                return .wait(state.lingering)
            }
            switch decision {
            case .done: continuation.resume()
            case .failed(let error): continuation.resume(throwing: error)
            case .wait(let lingering): lingering?.signal()
            }
        }
    }

    /// Takes no more records: `run` saves what is queued, without lingering, and returns.
    func close() {
        let (drainer, marker, lingering, gathering) = locked.withLock { state in
            state.closed = true
            defer { state.idleDrainer = nil; state.idleMarker = nil; state.lingering = nil; state.gatheringMarks = nil }
            return (state.idleDrainer, state.idleMarker, state.lingering, state.gatheringMarks)
        }
        drainer?.resume()
        marker?.resume()
        lingering?.signal()
        gathering?.signal()
    }

    /// Whether marks are gathering (`markLinger`) before a save ahead.
    var isGatheringMarks: Bool { locked.withLock { $0.gatheringMarks != nil } }

    /// The store's error, if saving failed; call once `run` has returned.
    func rethrowFailure() throws {
        if let failure = locked.withLock({ $0.failure }) { throw failure }
    }

    // MARK: Full saves

    private func drain() async {
        while true {
            await park(in: \.idleDrainer) { $0.pending.isEmpty && !$0.closed && $0.failure == nil }
            await lingerForMore()
            // The batch has one binding, so `keepMarks` changes its buffer in place rather than a copy.
            var batch: [ItemMove] = []
            let taken: UInt64? = locked.withLock { state in
                if state.pending.isEmpty || state.failure != nil { return nil }
                batch = state.pending.takeBatch()
                let last = state.enqueued - UInt64(state.pending.count)
                // The batch saves its own marks; the path ahead no longer needs to.
                state.marks.removeAll { $0.sequence <= last }
                return last
            }
            guard let last = taken else {
                if locked.withLock({ $0.closed || $0.failure != nil }) { return }
                continue
            }
            await marksAheadSettled()
            guard let known = locked.withLock({ $0.failure == nil ? $0.marksAfter(last) : nil }) else { return }
            do {
                Self.keepMarks(known, in: &batch)
                try await store.save(batch)
                // A mark of this batch's items saved (or saving) since `known` was read may have landed before the
                // batch: marked again, it stands.
                let overtaken = locked.withLock { state in
                    let queued = Set(state.marks.map(\.sequence))
                    return state.marksAfter(last).values.filter { entry in
                        known[entry.mark.id]?.sequence != entry.sequence && !queued.contains(entry.sequence)
                    }
                }
                let items = overtaken.isEmpty ? [] : Set(batch.map(\.record.id))
                let again = overtaken.filter { items.contains($0.mark.id) }.map(\.mark)
                if !again.isEmpty { try await store.saveMarks(again) }
            } catch {
                await failed(error)
                return
            }
            let ready = locked.withLock { state in
                state.committed = last
                state.savedAhead = state.savedAhead.filter { $0.key > last }
                return state.takeReadyWaiters()
            }
            for waiter in ready { waiter.resume() }
        }
    }

    /// Waits up to `linger` for more records, unless the batch is full or the writer closing. Nothing waits for a full
    /// save (the marks that phases wait for go ahead of it), so one sync and one transaction may as well cover many
    /// items: fewer syncs, and rows that share pages, which then go to the WAL once.
    private func lingerForMore() async {
        await wait(linger, stoppableIn: \.lingering) { state in
            state.pending.count >= maxBatch || !state.commitWaiters.isEmpty
        }
    }

    /// Waits up to `duration`, unless the writer is closing or failed or `cutShort` holds (checked under the lock);
    /// whoever ends the wait early stops the signal it leaves in `slot`.
    private func wait(_ duration: Duration, stoppableIn slot: WritableKeyPath<State, Wakeup?> & Sendable,
                      unless cutShort: (State) -> Bool = { _ in false }) async {
        guard duration > .zero else { return }
        let signal = Wakeup()
        let waits = locked.withLock { state in
            guard !state.closed, state.failure == nil, !cutShort(state) else { return false }
            state[keyPath: slot] = signal
            return true
        }
        if waits { await withStop(signal) { try? await Task.sleep(for: duration) } }
        locked.withLock { $0[keyPath: slot] = nil }
    }

    /// Sets the last record of each item in `batch` that has a newer mark (`known`) in flight, as that mark says:
    /// saved as it was, the older record would clear a mark the store may already hold.
    static func keepMarks(_ known: [ItemID: (sequence: UInt64, mark: InFlightMark)], in batch: inout [ItemMove]) {
        guard !known.isEmpty else { return }
        var seen = Set<ItemID>()
        for index in batch.indices.reversed() {
            let id = batch[index].record.id
            guard seen.insert(id).inserted, let newer = known[id] else { continue }
            batch[index].record.inFlight = true
            batch[index].record.runsAlone = newer.mark.alone
        }
    }

    /// Returns once no save of marks ahead is in progress. A full save calls it once it has taken its batch (and so
    /// the batch's marks, which the path ahead then no longer takes): a mark the path ahead took before that must
    /// not land after the batch's later records.
    private func marksAheadSettled() async {
        await park(in: \.fullSaveWaiting) { $0.isSavingMarks }
    }

    /// Waits in `slot` while `mustWait` holds (checked under the lock); whoever ends the wait takes the slot's
    /// continuation and resumes it.
    private func park(in slot: WritableKeyPath<State, CheckedContinuation<Void, Never>?> & Sendable,
                      while mustWait: (State) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let parked: Bool = locked.withLock { state in
                guard mustWait(state) else { return false }
                state[keyPath: slot] = continuation
                return true
            }
            if !parked { continuation.resume() }
        }
    }

    // MARK: Marks ahead

    private func saveMarksAhead() async {
        while true {
            await park(in: \.idleMarker) { $0.marks.isEmpty && !$0.closed && $0.failure == nil }
            // Marks gather for `markLinger` first: one save then carries them all.
            await wait(markLinger, stoppableIn: \.gatheringMarks)
            let taken: [(sequence: UInt64, mark: InFlightMark)]? = locked.withLock { state in
                guard !state.marks.isEmpty, state.failure == nil else { return nil }
                defer { state.marks = [] }
                state.savingMarks = state.marks
                return state.marks
            }
            guard let taken else {
                if locked.withLock({ $0.closed || $0.failure != nil }) { return }
                continue
            }
            var failure: (any Error)?
            do { try await store.saveMarks(taken.map(\.mark)) } catch { failure = error }
            let (ready, fullSave) = locked.withLock { state in
                state.savingMarks = nil
                defer { state.fullSaveWaiting = nil }
                if failure == nil {
                    for entry in taken where entry.sequence > state.committed { state.savedAhead[entry.sequence] = entry.mark }
                }
                return (failure == nil ? state.takeReadyWaiters() : [], state.fullSaveWaiting)
            }
            for waiter in ready { waiter.resume() }
            fullSave?.resume()
            if let failure {
                await failed(failure)
                return
            }
        }
    }

    /// The store failed: every waiter gets the error, both paths stop, the scheduler is told once.
    private func failed(_ error: any Error) async {
        let (waiters, alreadyFailed, drainer, marker, lingering, gathering) = locked.withLock { state in
            let alreadyFailed = state.failure != nil
            if !alreadyFailed { state.failure = error }
            defer {
                state.waiters = []; state.commitWaiters = []
                state.idleDrainer = nil; state.idleMarker = nil; state.lingering = nil; state.gatheringMarks = nil
            }
            return (state.waiters + state.commitWaiters, alreadyFailed, state.idleDrainer, state.idleMarker, state.lingering,
                    state.gatheringMarks)
        }
        lingering?.signal()
        gathering?.signal()
        for waiter in waiters { waiter.continuation.resume(throwing: error) }
        drainer?.resume()
        marker?.resume()
        if !alreadyFailed { await onFailure(error) }
    }
}
