import CLinux
import CairnCatalog
import CairnCore
import Glibc

/// Group commit for an import's lanes: the stages write and rename their files without an fsync each and hand
/// over the catalog rows that point at them; the item-state writer then makes the whole batch durable with one
/// `syncfs` of the library's file system and writes those rows with the batch's states in one transaction.
///
/// The invariant of the per-file fsyncs stands: no catalog row points at a file that is not durable. A crash
/// loses at most the batch not yet committed, whose items the next run redoes from their persisted state.
/// (After a power cut, not a kill, a renamed file of that batch may be short; the next run finds it does not
/// match its checksum and sets it aside in `quarantine/` before copying it again, as for any damaged original.)
package final class GroupCommit: Sendable {
    private let folder: Int32
    private let path: String
    private let pending = Locked(StageRows())
    private let syncs = Locked(0)

    /// Opens `libraryRoot` (resolved when the library was opened) to sync its file system.
    package init(libraryRoot: String) throws(SystemCallError) {
        folder = try SystemCall.result { open(libraryRoot, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }.get("open", libraryRoot)
        path = libraryRoot
    }

    deinit { close(folder) }

    /// Queues rows for the next batch (from the lanes' threads).
    package func add(_ body: (inout StageRows) -> Void) { pending.withLock { body(&$0) } }

    /// The rows queued so far, made durable: what the next transaction may write. On a failed sync the rows are
    /// dropped with the error (the run stops; their items redo their phase next run).
    package func takeDurableRows() throws(SystemCallError) -> StageRows {
        let rows = pending.withLock { rows in
            defer { rows = StageRows() }
            return rows
        }
        guard rows.pointsAtFiles else { return rows }
        try SystemCall.result { CLinux_syncfs(folder) }.get("syncfs", path)
        syncs.withLock { $0 += 1 }
        return rows
    }

    /// How many syncs made rows durable (a test compares it with the files they covered).
    package var syncCount: Int { syncs.withLock { $0 } }
}
