import CairnCore
import CairnQueue
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A worker's audit trail: one JSON line when a job starts and one when it ends, naming the job, its key, the lease
/// token and the worker, so overlapping runs of one job can be looked for afterwards (the chaos script does).
///
/// Each line is one `write(2)` on an `O_APPEND` descriptor, so several workers can share the file and a SIGKILL
/// leaves every line written before it. A write that fails is left out: the log must never fail a job.
public final class JobLog: Sendable {
    public let path: String
    private let descriptor: Int32
    private let worker: String

    public init(path: String, worker: UUID) throws(SystemCallError) {
        descriptor = try SystemCall.result { open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) }.get("open", path)
        self.path = path
        self.worker = worker.uuidString.lowercased()
    }

    /// Runs `job`, logging its start and its end (`done`, or `failed` with the reason).
    public func record(_ lease: Lease, _ job: () async throws -> String) async throws -> String {
        write(lease, event: "start", reason: nil)
        do {
            let result = try await job()
            write(lease, event: "done", reason: nil)
            return result
        } catch {
            write(lease, event: "failed", reason: String(describing: error))
            throw error
        }
    }

    private func write(_ lease: Lease, event: String, reason: String?) {
        var fields: [String: Any] = [
            "event": event, "job": lease.job, "token": lease.token.uuidString.lowercased(), "worker": worker,
            "pid": Int(getpid()), "kind": lease.work.kind.rawValue, "checksum": lease.work.checksum,
            "attempt": lease.attempt, "at": Date().timeIntervalSince1970,
        ]
        if let reason { fields["reason"] = reason }
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return }
        var line = data
        line.append(0x0A)
        line.withUnsafeBytes { buffer in _ = try? writeFully(descriptor, buffer, path: path) }
    }

    deinit { close(descriptor) }
}
