import CairnCore
import Foundation

/// A file of a run's walk, by its row id (the walk's order, which is path order).
public struct RunFile: Sendable, Equatable {
    public var id: Int64
    public var record: SourceFile
}

/// A sidecar the walk found, with the folder it was found in (what it is matched within).
public struct RunSidecar: Sendable, Equatable {
    public var folder: String
    public var record: SourceFile

    /// The bytewise range `(after, before)` holding every path under `folder`'s prefix ("folder/"): '0' follows '/'.
    package static func pathRange(under folder: String) -> (after: String, before: String) { (folder + "/", folder + "0") }

    /// Whether `path`, found under `folder`'s range, lies directly in it rather than in a subfolder.
    package static func isDirectly(in folder: String, _ path: String) -> Bool {
        let prefix = folder.isEmpty ? 0 : folder.utf8.count + 1
        return !path.utf8.dropFirst(prefix).contains(UInt8(ascii: "/"))
    }
}

/// What matching the walk against the last snapshot found.
public struct SnapshotMatch: Sendable, Equatable {
    public var files = 0
    public var bytes: Int64 = 0
    public var toHash = 0
    public var bytesToHash: Int64 = 0
    /// Snapshot rows of paths this walk did not find: files gone from the source since.
    public var vanished = 0

    public init(files: Int = 0, bytes: Int64 = 0, toHash: Int = 0, bytesToHash: Int64 = 0, vanished: Int = 0) {
        self.files = files
        self.bytes = bytes
        self.toHash = toHash
        self.bytesToHash = bytesToHash
        self.vanished = vanished
    }
}

/// A run's files sorted by what their content is.
public struct ContentCounts: Sendable, Equatable {
    public var newContent = 0
    public var newBytes: Int64 = 0
    /// Content already held: hashed this run and in the library, or held by an earlier file of this run.
    public var duplicates = 0
    /// Checksum from the cache, content in the library.
    public var unchanged = 0

    public init(newContent: Int = 0, newBytes: Int64 = 0, duplicates: Int = 0, unchanged: Int = 0) {
        self.newContent = newContent
        self.newBytes = newBytes
        self.duplicates = duplicates
        self.unchanged = unchanged
    }
}

/// How the scan compares with the source's last healthy snapshot: what the safety rails judge.
public struct SnapshotComparison: Sendable, Equatable {
    /// Files in the last healthy snapshot.
    public var previousFiles = 0
    /// Files whose content is known this run.
    public var currentFiles = 0
    /// Files of the last healthy snapshot not found now.
    public var vanishedFiles = 0

    public init(previousFiles: Int = 0, currentFiles: Int = 0, vanishedFiles: Int = 0) {
        self.previousFiles = previousFiles
        self.currentFiles = currentFiles
        self.vanishedFiles = vanishedFiles
    }
}

/// What the scan says about deletions and edits (the rules of the tests' `DeletionSignals` oracle).
public struct ScanSignals: Sendable, Equatable {
    /// Confirmed or approved content that is back in the source.
    public var reappeared: [Checksum] = []
    /// Content confirmed deleted by this scan (only a healthy scan confirms).
    public var stamped: [Checksum] = []
    /// Paths gone since the last healthy snapshot, or still anchored but not found (healthy scans only).
    public var deletedPaths: [String] = []
    /// Paths whose content changed (healthy scans only).
    public var editedPaths: [String] = []
    /// Gone paths whose edit anchors are released (healthy scans only).
    public var releasedPaths: [String] = []

    public init(reappeared: [Checksum] = [], stamped: [Checksum] = [], deletedPaths: [String] = [],
                editedPaths: [String] = [], releasedPaths: [String] = []) {
        self.reappeared = reappeared
        self.stamped = stamped
        self.deletedPaths = deletedPaths
        self.editedPaths = editedPaths
        self.releasedPaths = releasedPaths
    }
}

/// One import run's view of its source, kept in the catalog rather than in memory: every file the walk found, its
/// checksum once known, what became of its content, and the sidecars waiting to be linked. Each backend keeps them
/// where they join its own tables in one statement (SQLite: `TEMP` tables of the writer connection, `RunFileTable`;
/// PostgreSQL: `TEMP` tables of one connection the run holds). A handle lives for its `withRunTables` scope only.
/// One contract suite runs on each (`RunTablesContractTests`).
public protocol RunTables: Sendable {
    /// The run's source, whose snapshot the walk is matched against.
    var sourceID: Int64 { get }

    // The walk

    /// Appends files in the walk's order, each matched against the source's snapshot as it goes in: unchanged
    /// (same fingerprint) takes the snapshot's checksum, and is settled when the snapshot says its content is in the
    /// library; a changed one keeps its last checksum aside.
    func append(_ files: [SourceFile]) async throws
    /// Appends sidecars the walk found, kept by folder so they are read a folder at a time.
    func appendSidecars(_ files: [SourceFile]) async throws
    /// Counts the walk as matched against the snapshot: its files, what is left to hash, what vanished.
    func matchSnapshot() async throws -> SnapshotMatch
    /// Paths of the source's snapshot that this walk did not find, sorted bytewise.
    func vanishedPaths() async throws -> [String]

    // Hashing

    /// Up to `limit` files still to hash after row `id`, in order; a page stops early past `byteLimit` bytes (one
    /// file at least).
    func filesToHash(after id: Int64, limit: Int, byteLimit: Int64) async throws -> [RunFile]
    /// Records a page's checksums (with the fingerprint and kind hashing saw) and its failures, in one commit;
    /// `updatingSnapshot`: the checksums go into the source's snapshot too, the cache the next run reads.
    func recordHashes(_ hashed: [RunFile], failed: [Int64: FailureReason], updatingSnapshot: Bool) async throws

    // Content and the lanes' pages

    /// Groups the files by checksum and sorts them into new content, duplicates and unchanged files.
    func classify() async throws -> ContentCounts
    /// Up to `limit` pieces of new content after the one whose first file is `id`, in path order.
    func newContent(after id: Int64, limit: Int) async throws -> [RunFile]
    /// Up to `limit` items earlier runs left unfinished (or in flight) after item `id`, by id, leaving out content
    /// this run plans as new; `owingTransfer`: only items whose original is not in place yet.
    func unfinishedImportItems(after id: ItemID, limit: Int, owingTransfer: Bool) async throws -> [ItemRecord]
    /// How many items `unfinishedImportItems` pages through.
    func unfinishedImportItemCount(owingTransfer: Bool) async throws -> Int
    /// Items of the run's source the crash-loop guard failed for good whose content this walk found, by id.
    func crashFailedImportItems() async throws -> [ItemRecord]

    // Outcomes

    /// Notes the items the lanes handled (by checksum) and whether the run left each unfinished; what became of
    /// each is read from where its import item stands.
    func recordItems(_ lines: [FileOutcomeEntry]) async throws
    /// How many files end each way, counted without a line per file.
    func outcomeCounts() async throws -> [FileOutcome.Kind: Int]
    /// Every file of the walk in path order with what became of it, then the handled items no file of this walk
    /// holds (by path).
    func outcomes() async throws -> [FileOutcomeEntry]
    /// The handled items that failed this run, in plan order.
    func failedItems() async throws -> [ImportFailure]

    // Sidecars

    /// Up to `limit` sidecars after `last`, by folder then path (bytewise), that are not linked as they are now.
    func sidecarsToLink(after last: RunSidecar?, limit: Int) async throws -> [RunSidecar]
    /// Path → checksum of the files with known content directly in `folder` ("" for the source root).
    func checksums(inFolder folder: String) async throws -> [String: Checksum]

    // A sync's reconciliation, worked out over the run tables and the reconciliation stores so that no path →
    // checksum map of the source is held in memory. The in-memory engine in `Tests/CairnReconcileOracle`
    // is the specification; `ReconcileRunContractTests` checks each backend against it on random runs.

    /// Compares the scan (a file that could not be hashed counted with its last checksum) with the source's last
    /// healthy snapshot and its edit anchors, keeping the paths where they do not all agree; counts what the rails
    /// judge. Writes only the run's tables (a dry run calls it). After `classify`.
    func compareWithHealthySnapshot() async throws -> SnapshotComparison
    /// The deletion signals of this scan, after `compareWithHealthySnapshot`. An unhealthy scan only unstamps what
    /// came back.
    func scanSignals(sourceIsHealthy: Bool) async throws -> ScanSignals
    /// Library content this source held and no longer holds, unprotected, with its stamps as they stand after this
    /// run (`stamped` are this run's, at `now`). After `scanSignals`.
    func absentContent(stamped: [Checksum], at now: Date) async throws -> [AbsentContent]
    /// Content of the scan the library does not hold, sorted.
    func contentMissingFromLibrary() async throws -> [Checksum]
    /// Where each of `checksums` last lived in the source, by the last healthy snapshot (the first path, bytewise).
    func lastSourcePaths(of checksums: [Checksum]) async throws -> [Checksum: String]
    /// Everything the sync learned, in one commit: observed content and new anchors from the changed paths,
    /// `sync.changes`, and when the scan was healthy the released anchors and the snapshot's changed rows; then the
    /// source's facts and the waiting items.
    func commit(_ sync: SyncRecord, currentFiles: Int) async throws
}

/// A catalog that keeps run tables.
public protocol RunTablesCatalog: Sendable {
    /// Runs `body` with a run's tables for source `sourceID`, started empty; they are gone once `body` returns.
    func withRunTables<Value: Sendable>(sourceID: Int64, _ body: (any RunTables) async throws -> Value) async throws
        -> Value
}

/// Run tables that a thread of the blocking pool writes directly (SQLite's): the walk inserts its batches itself.
public protocol RunTablesWrittenInPlace: Sendable {
    /// `RunTables.append`, on the caller's own (blocking) thread.
    func appendInPlace(_ files: [SourceFile]) throws
    /// `RunTables.appendSidecars`, on the caller's own (blocking) thread.
    func appendSidecarsInPlace(_ files: [SourceFile]) throws
}

/// Feeds a walk on a blocking thread into run tables. Tables written in place (SQLite's) are written by the walk's
/// own thread: an insert that needed another pool thread while the walk held one would wait for ever once every
/// thread of the pool walks. Others (PostgreSQL's, whose inserts wait on the network, not on the pool) get each
/// batch inserted by a task of its own, in order, so the walk and the inserts run side by side; at most two batches
/// wait, so a fast walk never piles files up in memory. The first failed insert stops the rest and is thrown to the
/// walk.
public final class RunTablesAppender: Sendable {
    private let tables: any RunTables
    private let room = BlockingPool.Semaphore(value: 2)
    /// The last insert queued, and the first failure.
    private let state = Locked<(last: Task<Void, Never>?, failure: String?)>((nil, nil))

    public init(_ tables: any RunTables) { self.tables = tables }

    /// Queues a batch of media files; throws the first insert's failure, once there is one.
    public func append(_ files: [SourceFile]) throws {
        if let inPlace = tables as? any RunTablesWrittenInPlace { return try inPlace.appendInPlace(files) }
        try enqueue { try await $0.append(files) }
    }

    /// Queues a batch of sidecars, in order with the media batches.
    public func appendSidecars(_ files: [SourceFile]) throws {
        if let inPlace = tables as? any RunTablesWrittenInPlace { return try inPlace.appendSidecarsInPlace(files) }
        try enqueue { try await $0.appendSidecars(files) }
    }

    private func enqueue(_ insert: @escaping @Sendable (any RunTables) async throws -> Void) throws {
        try throwFailure()
        room.wait()
        state.withLock { state in
            let previous = state.last
            state.last = Task { [tables, room, state = self.state] in
                await previous?.value
                defer { room.signal() }
                guard state.withLock({ $0.failure }) == nil else { return }
                do { try await insert(tables) } catch { state.withLock { $0.failure = $0.failure ?? "\(error)" } }
            }
        }
    }

    /// Waits for the queued batches, once the walk has returned; throws the first insert's failure.
    public func finish() async throws {
        await state.withLock({ $0.last })?.value
        try throwFailure()
    }

    private func throwFailure() throws {
        if let failure = state.withLock({ $0.failure }) { throw RunTablesError(reason: failure) }
    }
}

/// The run tables could not be written (the catalog's disk is full or failing, or its server gone).
public struct RunTablesError: Error, CustomStringConvertible, Sendable {
    public var reason: String
    public var description: String { reason }
}
