import ArgumentParser
import CairnCore
import CairnImport
import CairnLibrary

/// How an import or a sync that failed ends: a lock another process holds and a run's own failure are told in one
/// line and exit with their documented codes, anything else is thrown on; either way the run's metrics say how it
/// ended.
enum RunExit {
    static func reportingFailure<Value>(metrics: RunMetricsSession?, _ run: () async throws -> Value) async throws -> Value {
        do {
            return try await run()
        } catch {
            let status = documentedStatus(error)
            await metrics?.finish(exitStatus: status ?? .failure)
            guard let status else { throw error }
            throw Output.fail("\(error)", status)
        }
    }

    /// The documented code of a lock another process holds or of a run's own failure; nil for anything else.
    static func documentedStatus(_ error: any Error) -> ExitStatus? {
        (error as? LibraryLockedError)?.exitStatus ?? (error as? WorkerError)?.exitStatus
    }
}
