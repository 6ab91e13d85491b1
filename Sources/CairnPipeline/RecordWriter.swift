import CairnCore

/// The one task that saves records, in order, batching whatever piled up during the previous save (at most
/// `maxBatch` records a transaction, so a run that queues thousands at once never converts them all at once).
///
/// The scheduler enqueues without waiting (its state changes stay synchronous); work that must not
/// start before its record is durable (the in-flight mark) awaits `waitCommitted`.
final class RecordWriter: Sendable {
    private struct State {
        var pending: [ItemRecord] = []
        var enqueued: UInt64 = 0
        var committed: UInt64 = 0
        var failure: (any Error)?
        var waiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var idleDrainer: CheckedContinuation<Void, Never>?
        var closed = false
        /// Set in `start` and read in `finish`, possibly on other threads.
        var drainer: Task<Void, Never>?
    }

    static let maxBatch = 512

    private let store: any ItemStateStore
    private let locked = Locked(State())
    private let onFailure: @Sendable (any Error) async -> Void

    init(store: any ItemStateStore, onFailure: @escaping @Sendable (any Error) async -> Void) {
        self.store = store
        self.onFailure = onFailure
    }

    func start() {
        let task = Task.detached { [self] in await drain() }
        locked.withLock { $0.drainer = task }
    }

    /// Queues `record`; returns its sequence number for `waitCommitted`.
    @discardableResult
    func enqueue(_ record: ItemRecord) -> UInt64 {
        let (sequence, drainer) = locked.withLock { state in
            state.pending.append(record)
            state.enqueued += 1
            defer { state.idleDrainer = nil }
            return (state.enqueued, state.idleDrainer)
        }
        drainer?.resume()
        return sequence
    }

    /// Returns once every record up to `sequence` is saved; throws the store's error if saving failed.
    func waitCommitted(_ sequence: UInt64) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enum Decision { case done, failed(any Error), wait }
            let decision: Decision = locked.withLock { state in
                if state.committed >= sequence { return .done }
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

    /// Saves what is queued, stops, and rethrows the store's error if there was one.
    func finish() async throws {
        let drainerToWake = locked.withLock { state in
            state.closed = true
            defer { state.idleDrainer = nil }
            return state.idleDrainer
        }
        drainerToWake?.resume()
        await locked.withLock({ $0.drainer })?.value
        if let failure = locked.withLock({ $0.failure }) { throw failure }
    }

    private func drain() async {
        while true {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let parked: Bool = locked.withLock { state in
                    guard state.pending.isEmpty && !state.closed else { return false }
                    state.idleDrainer = continuation
                    return true
                }
                if !parked { continuation.resume() }
            }
            let taken: (batch: [ItemRecord], last: UInt64)? = locked.withLock { state in
                if state.pending.isEmpty { return nil }
                guard state.pending.count > Self.maxBatch else {
                    defer { state.pending = [] }
                    return (state.pending, state.enqueued)
                }
                let batch = Array(state.pending.prefix(Self.maxBatch))
                state.pending.removeFirst(Self.maxBatch)
                return (batch, state.enqueued - UInt64(state.pending.count))
            }
            guard let taken else {
                if locked.withLock({ $0.closed }) { return }
                continue
            }
            do {
                try await store.save(taken.batch)
            } catch {
                let failed = locked.withLock { state in
                    state.failure = error
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in failed { waiter.continuation.resume(throwing: error) }
                await onFailure(error)
                return
            }
            let ready = locked.withLock { state in
                state.committed = taken.last
                let ready = state.waiters.filter { $0.sequence <= taken.last }
                state.waiters.removeAll { $0.sequence <= taken.last }
                return ready
            }
            for waiter in ready { waiter.continuation.resume() }
        }
    }
}
