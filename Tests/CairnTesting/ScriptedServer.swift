import CairnCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A server the suite starts with one of the project's scripts (`scripts/postgres-cluster`, `scripts/s3-server`):
/// the folder `scripts/test` started it in (named by `variable`), or a folder of this process's own, started on first
/// use and stopped at exit.
enum ScriptedServer {
    static func folder(variable: String, script: String, prefix: String) throws -> String {
        if let folder = ProcessInfo.processInfo.environment[variable], !folder.isEmpty { return folder }
        let folder = NSTemporaryDirectory() + prefix + UUID().uuidString
        // The server would hold on to a pipe for its output: the script's output goes to a file.
        try ExternalTool.run(["bash", "-c", "\"$0\" start \"$1\" >\"$1.log\" 2>&1 || { cat \"$1.log\" >&2; exit 1; }",
                              script, folder])
        started.withLock { $0.append((script, folder)) }
        registerStopAtExit
        return folder
    }

    private static let started = Locked<[(script: String, folder: String)]>([])

    /// At exit Foundation's Process may no longer start anything: the shell's `system` stops each server.
    private static let registerStopAtExit: Void = {
        atexit {
            for (script, folder) in ScriptedServer.started.withLock({ $0 }) {
                _ = system("'\(script)' stop '\(folder)' >/dev/null 2>&1; rm -f '\(folder).log'")
            }
        }
    }()
}
