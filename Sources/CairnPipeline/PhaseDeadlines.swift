import CairnCore

/// The timeouts of the phases whose stage work runs, watched by one task that sleeps until the earliest of them.
///
/// Why one: a timer per phase (a task and a timer source, armed and torn down for every phase of every file) cost
/// a small-file import a visible share of its CPU, and nearly all of them are cancelled long before they fire.
/// Arming and disarming here only take a lock; the watcher wakes when a deadline passes, or when a phase arms a
/// deadline earlier than the one it sleeps for.
protocol PhaseDeadlines: Sendable {
    /// Times `token`'s phase out `timeout` from now, unless disarmed first.
    func arm(_ token: UInt64, timeout: Duration)
    func disarm(_ token: UInt64)
    /// Watches until stopped: its owner runs it as a child task.
    func watch() async
    /// Stops the watcher; nothing fires afterwards.
    func stop()
}

/// Makes the watcher for `clock` (opening the existential, whose instants only it knows).
func makePhaseDeadlines(clock: any Clock<Duration>,
                        onTimeout: @escaping @Sendable (UInt64, Duration) async -> Void) -> any PhaseDeadlines {
    func make<C: Clock<Duration>>(_ clock: C) -> any PhaseDeadlines {
        ClockPhaseDeadlines(clock: clock, onTimeout: onTimeout)
    }
    return make(clock)
}

final class ClockPhaseDeadlines<C: Clock<Duration>>: PhaseDeadlines {
    private struct Armed {
        var deadline: C.Instant
        var timeout: Duration
    }

    private struct State {
        var armed: [UInt64: Armed] = [:]
        /// The deadline the watcher sleeps for, and its sleep (cancelled when an earlier deadline is armed).
        var sleepingUntil: C.Instant?
        var sleep: Wakeup?
        /// The watcher, parked while nothing is armed.
        var idle: CheckedContinuation<Void, Never>?
        var stopped = false
    }

    private enum Next { case stop, park, sleep(C.Instant) }

    private let clock: C
    private let onTimeout: @Sendable (UInt64, Duration) async -> Void
    private let state = Locked(State())

    init(clock: C, onTimeout: @escaping @Sendable (UInt64, Duration) async -> Void) {
        self.clock = clock
        self.onTimeout = onTimeout
    }

    func arm(_ token: UInt64, timeout: Duration) {
        let deadline = clock.now.advanced(by: timeout)
        let (idle, earlierSleep) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Wakeup?) in
            guard !state.stopped else { return (nil, nil) }
            state.armed[token] = Armed(deadline: deadline, timeout: timeout)
            defer { state.idle = nil }
            if let sleepingUntil = state.sleepingUntil, deadline < sleepingUntil { return (state.idle, state.sleep) }
            return (state.idle, nil)
        }
        idle?.resume()
        earlierSleep?.signal()
    }

    func disarm(_ token: UInt64) {
        state.withLock { _ = $0.armed.removeValue(forKey: token) }
    }

    func stop() {
        let (idle, sleep) = state.withLock { state in
            state.stopped = true
            state.armed = [:]
            defer { state.idle = nil; state.sleep = nil }
            return (state.idle, state.sleep)
        }
        idle?.resume()
        sleep?.signal()
    }

    /// Ends once stopped: a parked watcher is resumed, a sleeping one's sleep cut short.
    func watch() async {
        while true {
            let next: Next = state.withLock { state in
                if state.stopped { return .stop }
                guard let earliest = state.armed.values.map(\.deadline).min() else { return .park }
                state.sleepingUntil = earliest
                return .sleep(earliest)
            }
            switch next {
            case .stop:
                return
            case .park:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let parked = state.withLock { state -> Bool in
                        guard state.armed.isEmpty && !state.stopped else { return false }
                        state.idle = continuation
                        return true
                    }
                    if !parked { continuation.resume() }
                }
            case .sleep(let deadline):
                let sleep = Wakeup()
                // A deadline armed before the sleep was stored could not cancel it: look again.
                let cancelNow = state.withLock { state in
                    if !state.stopped { state.sleep = sleep }
                    let earliest = state.armed.values.map(\.deadline).min()
                    return state.stopped || earliest.map { $0 < deadline } == true
                }
                if !cancelNow {
                    await withStop(sleep) { [clock] in try? await clock.sleep(until: deadline, tolerance: nil) }
                }
                let now = clock.now
                let due = state.withLock { state -> [(UInt64, Duration)] in
                    state.sleep = nil
                    state.sleepingUntil = nil
                    guard !state.stopped else { return [] }
                    let due = state.armed.filter { $0.value.deadline <= now }
                    for token in due.keys { state.armed[token] = nil }
                    return due.sorted { $0.key < $1.key }.map { ($0.key, $0.value.timeout) }
                }
                for (token, timeout) in due { await onTimeout(token, timeout) }
            }
        }
    }
}
