import CairnCore
import PostgresNIO

/// The connection a run's tables live on, watched. postgres-nio never answers a statement written to a connection
/// the server has closed (`pg_terminate_backend`, a restart): the write fails inside the channel and the answer's
/// promise is dropped. So every operation on the run's tables runs here, and ends with `runConnectionLost` as soon
/// as the connection closes, or with `CancellationError` as soon as its task is cancelled (a signal ends the run
/// even while the server does not answer). What hangs is left behind: the run is over once its tables are gone.
final class RunConnection: Sendable {
    let connection: PostgresConnection
    private let waiting = Locked(Waiting())

    private struct Waiting {
        var closed = false
        var next = 0
        var failures: [Int: @Sendable (any Error) -> Void] = [:]
    }

    init(_ connection: PostgresConnection) {
        self.connection = connection
        connection.closeFuture.whenComplete { [waiting] _ in
            let failures = waiting.withLock { waiting in
                waiting.closed = true
                defer { waiting.failures = [:] }
                return Array(waiting.failures.values)
            }
            for fail in failures { fail(PostgresCatalogError.runConnectionLost) }
        }
    }

    /// Runs `body` (statements on `connection`), unless the connection closes or the task is cancelled first.
    func watching<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let answer = FirstOutcome<Value>()
        let work = Locked<Task<Void, Never>?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                answer.wait(continuation)
                guard let id = register({ answer.give(.failure($0)) }) else {
                    return answer.give(.failure(PostgresCatalogError.runConnectionLost))
                }
                if Task.isCancelled { return answer.give(.failure(CancellationError())) }
                work.withLock { task in
                    task = Task { [self] in
                        let result: Result<Value, any Error>
                        do { result = .success(try await body()) } catch { result = .failure(error) }
                        unregister(id)
                        answer.give(result)
                    }
                }
            }
        } onCancel: {
            answer.give(.failure(CancellationError()))
            work.withLock { $0?.cancel() }
        }
    }

    /// Notes how to fail a waiting operation; nil once the connection has closed.
    private func register(_ fail: @escaping @Sendable (any Error) -> Void) -> Int? {
        waiting.withLock { waiting in
            guard !waiting.closed else { return nil }
            waiting.next += 1
            waiting.failures[waiting.next] = fail
            return waiting.next
        }
    }

    private func unregister(_ id: Int) { waiting.withLock { _ = $0.failures.removeValue(forKey: id) } }
}
