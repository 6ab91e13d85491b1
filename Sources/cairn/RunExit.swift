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
        } catch let locked as LibraryLockedError {
            Output.error(locked.description)
            await metrics?.finish(exitStatus: locked.exitStatus)
            throw ExitCode(locked.exitStatus.rawValue)
        } catch let error as WorkerError {
            Output.error(error.description)
            await metrics?.finish(exitStatus: error.exitStatus)
            throw ExitCode(error.exitStatus.rawValue)
        } catch {
            await metrics?.finish(exitStatus: .failure)
            throw error
        }
    }
}
