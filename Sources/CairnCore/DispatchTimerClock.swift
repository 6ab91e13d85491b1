import Dispatch

/// The continuous clock, whose sleeps are dispatch timer sources that a cancel tears down at once.
///
/// Why: on Linux, a cancelled `ContinuousClock.sleep` returns at once but keeps its dispatch timer
/// (about 500 bytes) until the deadline passes. The import pipeline starts a timeout for every phase
/// and cancels it when the phase ends, so with timeouts of minutes a 10,000-file import held some
/// 30,000 dead timers: most of its memory growth per file.
public struct DispatchTimerClock: Clock {
    public typealias Instant = ContinuousClock.Instant

    public init() {}

    public var now: Instant { ContinuousClock.now }
    public var minimumResolution: Duration { ContinuousClock().minimumResolution }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let timer = CancellableTimer()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                timer.start(after: now.duration(to: deadline), continuation)
            }
        } onCancel: {
            timer.cancel()
        }
    }
}

/// One sleep: resumes its continuation exactly once, when the timer fires or on cancel, whichever comes first.
final class CancellableTimer: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var source: (any DispatchSourceTimer)?
        var cancelled = false
    }

    private let state = Locked(State())

    /// A dispatch timer is armed: not yet fired nor cancelled.
    var isArmed: Bool { state.withLock { $0.source != nil } }

    func start(after delay: Duration, _ continuation: CheckedContinuation<Void, any Error>) {
        let alreadyCancelled = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.continuation = continuation
            return false
        }
        if alreadyCancelled { return continuation.resume(throwing: CancellationError()) }
        guard delay > .zero else { return finish(throwing: nil) }

        let source = DispatchSource.makeTimerSource(queue: .global())
        source.schedule(deadline: .now() + delay.dispatchInterval, leeway: .milliseconds(1))
        source.setEventHandler { [weak self] in self?.finish(throwing: nil) }
        let armed = state.withLock { state -> Bool in
            guard state.continuation != nil else { return false }  // cancelled meanwhile
            state.source = source
            return true
        }
        // Always resumed: libdispatch traps when a source that never ran is released.
        source.resume()
        if !armed { source.cancel() }
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
        finish(throwing: CancellationError())
    }

    private func finish(throwing error: (any Error)?) {
        let (continuation, source) = state.withLock { state in
            defer { state.continuation = nil; state.source = nil }
            return (state.continuation, state.source)
        }
        source?.cancel()
        guard let continuation else { return }
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }
}

extension Duration {
    /// The duration for a dispatch timer, in nanoseconds (clamped: a century is as good as for ever).
    var dispatchInterval: DispatchTimeInterval {
        let nanoseconds = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = nanoseconds.overflow ? Int64.max : nanoseconds.partialValue + components.attoseconds / 1_000_000_000
        return .nanoseconds(Int(clamping: total))
    }
}
