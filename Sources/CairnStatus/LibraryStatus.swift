import CairnCatalog
import CairnCore
import CairnLibrary
import CairnNarration
import Foundation
import Glibc

/// What `cairn status` reports about a library: its last run and when it last succeeded.
public enum LibraryStatus {
    /// The report of the library at `layout`, whose catalog is any backend's.
    public static func report(layout: LibraryLayout, catalog: any ItemCatalog & RunCatalog) async throws -> StatusReport {
        var report = report(layout: layout, lastRun: try await catalog.lastRun(command: nil),
                            lastSuccess: try await catalog.lastRun(endedIn: [.success]),
                            owingDerivatives: try await catalog.importItemsOwingDerivatives())
        if let drift = catalog as? any DriftCatalog, let checked = try await drift.lastDestinationCheck(.trash) {
            let records = try await drift.destinationDrift()
            report.drift = DriftStatus(trashed: records.count { $0.state == .trashed },
                                       missing: records.count { $0.state == .missing },
                                       lastFullCheck: try await drift.lastDestinationCheck(.full) ?? checked)
        }
        return report
    }

    static func report(layout: LibraryLayout, lastRun record: RunRecord?, lastSuccess: RunRecord?,
                       owingDerivatives: Int) -> StatusReport {
        var lastRun: RunSummary?
        if let record {
            lastRun = record.summary.flatMap { try? NarrationJSON.decoder().decode(RunSummary.self, from: Data($0.utf8)) }
            if lastRun == nil {
                // Killed before it could write its summary: its run log still tells how far it got.
                let events = (try? RunLogStore(directory: layout.runLogDirectory).events(of: record.id)) ?? []
                lastRun = NarrationState.replay(events).summary()
                    ?? RunSummary(runID: record.id, command: record.command, startedAt: record.startedAt, status: .syncing)
            }
        }
        var report = StatusReport(lastRun: lastRun, lastSuccessfulSync: lastSuccess?.endedAt ?? lastSuccess?.startedAt,
                                  isRunning: isLocked(libraryRoot: layout.root))
        report.awaitingDerivatives = owingDerivatives
        return report
    }

    /// Whether another process holds the library lock right now.
    /// The holder's pid, written in the lock file, answers first without touching the lock: only when that
    /// process is alive is the shared lock tried (briefly), so looking never gets in a starting run's way.
    static func isLocked(libraryRoot: String) -> Bool {
        guard let holder = LibraryLock.recordedHolder(libraryRoot: libraryRoot) else { return false }
        switch SystemCall.result({ kill(holder, 0) }) {
        case .success, .failure(.notPermitted): break  // alive (another user's process answers EPERM)
        case .failure: return false
        }
        return (try? ReaderLock(libraryRoot: libraryRoot)) == nil
    }
}
