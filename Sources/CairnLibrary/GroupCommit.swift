import CLinux
import CairnCatalog
import CairnCore
import Glibc

/// Group commit for an import's lanes: the stages write and rename their files without an fsync each and return
/// the catalog rows that point at them with their item's move; the item-state writer then makes the whole batch
/// durable with one `syncfs` of the library's file system and writes those rows with the batch's states in one
/// transaction.
///
/// The invariant of the per-file fsyncs stands: no catalog row points at a file that is not durable. A crash
/// loses at most the batch not yet committed, whose items the next run redoes from their persisted state.
/// (After a power cut, not a kill, a renamed file of that batch may be short; the next run finds it does not
/// match its checksum and sets it aside in `quarantine/` before copying it again, as for any damaged original.)
package final class GroupCommit: Sendable {
    private let folder: Int32
    private let path: String
    private let syncs = Locked(0)

    /// Opens `libraryRoot` (resolved when the library was opened) to sync its file system.
    package init(libraryRoot: String) throws(SystemCallError) {
        folder = try SystemCall.result { open(libraryRoot, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }.get("open", libraryRoot)
        path = libraryRoot
    }

    deinit { close(folder) }

    /// Makes every file written so far durable, when `rows` point at some: what the next transaction may then write.
    /// On a failed sync the rows are not written (the run stops; their items redo their phase next run).
    package func makeDurable(_ rows: StageRows) throws(SystemCallError) {
        guard rows.pointsAtFiles else { return }
        try SystemCall.result { CLinux_syncfs(folder) }.get("syncfs", path)
        syncs.withLock { $0 += 1 }
    }

    /// How many syncs made rows durable (a test compares it with the files they covered).
    package var syncCount: Int { syncs.withLock { $0 } }
}
