import Dispatch

/// An operation that ran past the time it was given, and was given up.
public struct TimeLimitExceeded: Error, CustomStringConvertible, Equatable {
    public var operation: String
    public var limit: Duration

    public init(operation: String, limit: Duration) {
        self.operation = operation
        self.limit = limit
    }

    public var description: String {
        let seconds = limit.seconds
        let shown = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
        return "\(operation) took longer than \(shown) s"
    }
}

/// Runs `body`, and throws `TimeLimitExceeded` if it has not ended within `limit`. At the limit `body` is cancelled
/// and abandoned, not awaited: it may run on, or never end, its result dropped.
///
/// Why abandoned, unlike everything else in a run's tree of tasks: the calls this bounds are a client library's,
/// and one of them was seen to ignore cancellation and never end (postgres-nio's query on a connection the server
/// had just closed). A limit that waited for the body would hang with it.
public func withTimeLimit<Value: Sendable>(_ limit: Duration, _ operation: String,
                                           _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
    let race = FirstOutcome<Value>()
    let work = Task {
        do { race.give(.success(try await body())) } catch { race.give(.failure(error)) }
    }
    // A dispatch timer rather than a sleeping task: one task a call is all the limit costs.
    let timer = DispatchSource.makeTimerSource(queue: .global())
    timer.schedule(deadline: .now() + limit.dispatchInterval, leeway: .milliseconds(10))
    timer.setEventHandler {
        race.give(.failure(TimeLimitExceeded(operation: operation, limit: limit)))
        work.cancel()
    }
    timer.resume()
    defer { timer.cancel() }
    return try await withTaskCancellationHandler {
        try await race.value()
    } onCancel: {
        // The caller's cancel reaches the work; the limit still bounds how long the caller waits for it.
        work.cancel()
    }
}
