/// The first of several outcomes racing to end one wait (work's end, a time limit, a lost connection), handed to the
/// one caller waiting for it; the later ones are dropped.
package final class FirstOutcome<Value: Sendable>: Sendable {
    private struct State {
        var outcome: Result<Value, any Error>?
        var waiter: CheckedContinuation<Value, any Error>?
    }

    private let state = Locked(State())

    package init() {}

    /// Records `outcome` unless one came first, and resumes the waiter with it.
    package func give(_ outcome: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: outcome)
    }

    /// Resumes `continuation` with the first outcome: at once if it has come, else when it comes.
    package func wait(_ continuation: CheckedContinuation<Value, any Error>) {
        let outcome = state.withLock { state -> Result<Value, any Error>? in
            if state.outcome == nil { state.waiter = continuation }
            return state.outcome
        }
        if let outcome { continuation.resume(with: outcome) }
    }

    /// The first outcome, waiting for it.
    package func value() async throws -> Value {
        try await withCheckedThrowingContinuation { wait($0) }
    }
}
