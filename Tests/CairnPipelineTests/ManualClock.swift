import Foundation

/// A clock that only moves when the test says so, and remembers every sleep asked of it.
final class ManualClock: Clock, @unchecked Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private let signal: TestSignal
    private var current = Instant(offset: .zero)
    private var sleepers: [UInt64: Sleeper] = [:]
    private var nextID: UInt64 = 0
    private var requested: [Duration] = []

    init(signal: TestSignal) { self.signal = signal }

    var now: Instant { lock.withLock { current } }
    var minimumResolution: Duration { .zero }

    /// Every sleep asked for, as a duration from the moment it was asked, in order.
    var requestedSleeps: [Duration] { lock.withLock { requested } }
    /// Time left for each sleeper still waiting.
    var pendingSleeps: [Duration] { lock.withLock { sleepers.values.map { current.duration(to: $0.deadline) } } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = lock.withLock { () -> UInt64 in nextID += 1; return nextID }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Decision { case wait, wake, cancelled }
                let decision: Decision = lock.withLock {
                    requested.append(current.duration(to: deadline))
                    if Task.isCancelled { return .cancelled }
                    if deadline <= current { return .wake }
                    sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return .wait
                }
                switch decision {
                case .wait: signal.changed()
                case .wake: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = lock.withLock { sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
            if sleeper != nil { signal.changed() }
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline passed.
    func advance(by duration: Duration) {
        let due = lock.withLock {
            current = current.advanced(by: duration)
            let due = sleepers.filter { $0.value.deadline <= current }
            for key in due.keys { sleepers.removeValue(forKey: key) }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits until someone sleeps for exactly `duration` (measured when asked) and is still asleep.
    func waitForSleeper(_ duration: Duration) async {
        await signal.wait { [self] in pendingSleeps.contains(duration) }
    }

    /// Waits until nobody sleeps (every sleeper woken or cancelled).
    func waitUntilNobodySleeps() async {
        await signal.wait { [self] in pendingSleeps.isEmpty }
    }
}
