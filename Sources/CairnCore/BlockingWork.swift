import Dispatch

/// Runs blocking work (file I/O, FFmpeg, a parallel hash) on a Dispatch thread, off Swift's cooperative pool,
/// so the few cooperative threads stay free for the tasks that narrate, tick and schedule.
public func runBlocking<Value: Sendable>(
    _ work: @escaping @Sendable () throws -> Value
) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try work() })
        }
    }
}
