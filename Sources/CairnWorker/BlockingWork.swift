import Dispatch

/// Runs blocking work (a parallel hash, file copies, fsync, FFmpeg, SQLite) on a Dispatch thread, off Swift's cooperative
/// pool, so slow system calls never starve the tasks that schedule and narrate. The lanes' widths bound
/// how many run at once. Cancelling the awaiting task does not stop the work: a timed-out or abandoned
/// phase finishes (or fails) on its thread and its result is ignored.
enum BlockingWork {
    static func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try body() })
            }
        }
    }
}
