import CairnCore

/// A catalog's snapshots of its sources: the files each source held when it was last walked.
public protocol SnapshotCatalog: Sendable {
    /// Writes a snapshot's changes in one commit: new or changed files, and paths gone from the source. A file whose
    /// content changed is no longer known to be in the library.
    func updateSnapshot(sourceID: Int64, upserting files: [SourceFile], removing removedPaths: [String]) async throws
    /// Marks the snapshot files of `sourceID` whose content now has an asset, so the next walk settles them without
    /// a lookup.
    func markSnapshotContentInLibrary(sourceID: Int64) async throws

    /// Which of `checksums` some source held when last walked.
    func heldByAnySource(_ checksums: Set<Checksum>) async throws -> Set<Checksum>
    /// The sources of this library, by id.
    func sources() async throws -> [SourceRecord]
    /// The id of the source registered at `rootPath`, without registering it.
    func existingSourceID(forRoot rootPath: String) async throws -> Int64?
}

/// A catalog's record of runs: how each started and ended, and the files that failed in it.
public protocol RunCatalog: Sendable {
    func startRun(_ run: RunRecord) async throws
    /// Records how a run ended, with its per-file failures, in one commit.
    func finishRun(_ run: RunRecord, failures: [RunFailureRecord]) async throws
    /// The run that started last (of `command`, when given).
    func lastRun(command: String?) async throws -> RunRecord?
    func run(id: String) async throws -> RunRecord?
    /// The last `limit` runs, newest first.
    func runs(limit: Int) async throws -> [RunRecord]
    /// The run that started last of those that ended in one of `outcomes` (`[.success]`: the last that went well).
    func lastRun(endedIn outcomes: [RunOutcome]) async throws -> RunRecord?
    /// A run's failures, by path.
    func failures(runID: String) async throws -> [RunFailureRecord]
}

extension SQLiteCatalog: SnapshotCatalog, RunCatalog {}
