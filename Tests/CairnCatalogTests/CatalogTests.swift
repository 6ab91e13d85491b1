import CairnCore
import CairnReconcileOracle
import CairnTesting
import Foundation
import GRDB
import Testing

@testable import CairnCatalog

@Suite struct CatalogTests {
    func checksum(_ seed: UInt8) -> Checksum { Checksum(bytes: [UInt8](repeating: seed, count: 20))! }

    @Test func migratesAndReopens() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.subpath("catalog.sqlite")
        let first = try SQLiteCatalog(path: path)
        let applied = try await first.appliedMigrations()
        #expect(applied.first == "v1: sources, snapshots, assets, runs")
        let reopened = try SQLiteCatalog(path: path)
        #expect(try await reopened.appliedMigrations() == applied)
        _ = try await reopened.sourceID(forRoot: "/src")
        // A write-ahead log beside the database means WAL mode: readers never wait for a running import.
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func sourceIDIsStablePerRoot() async throws {
        let directory = try TemporaryDirectory()
        let catalog = try SQLiteCatalog(path: directory.subpath("catalog.sqlite"))
        let a = try await catalog.sourceID(forRoot: "/media/card")
        let b = try await catalog.sourceID(forRoot: "/home/me/Pictures")
        #expect(a != b)
        #expect(try await catalog.sourceID(forRoot: "/media/card") == a)
    }

    @Test func snapshotRoundTripsFingerprintsIncludingHugeInodes() async throws {
        let directory = try TemporaryDirectory()
        let catalog = try SQLiteCatalog(path: directory.subpath("catalog.sqlite"))
        let source = try await catalog.sourceID(forRoot: "/src")
        let huge = FileFingerprint(device: UInt64.max - 1, inode: UInt64.max, size: 5_000_000_000, modificationTimeNanoseconds: 1_700_000_000_123_456_789)
        let records = [
            SourceFile(relativePath: "a/b.jpg", fingerprint: huge, checksum: checksum(1), kind: .photo),
            SourceFile(relativePath: "c.mov", fingerprint: FileFingerprint(device: 1, inode: 2, size: 3, modificationTimeNanoseconds: 4), checksum: nil, kind: .video),
        ]
        try await catalog.updateSnapshot(sourceID: source, upserting: records, removing: [])
        let loaded = try await catalog.snapshot(sourceID: source)
        #expect(loaded["a/b.jpg"] == records[0])
        #expect(loaded["c.mov"] == records[1])

        var changed = records[1]
        changed.checksum = checksum(2)
        try await catalog.updateSnapshot(sourceID: source, upserting: [changed], removing: ["a/b.jpg"])
        let after = try await catalog.snapshot(sourceID: source)
        #expect(after.count == 1)
        #expect(after["c.mov"]?.checksum == checksum(2))
        #expect(try await catalog.snapshot(sourceID: try catalog.sourceID(forRoot: "/other")).isEmpty)
    }

    @Test func assetsAreUniqueByChecksum() async throws {
        let directory = try TemporaryDirectory()
        let catalog = try SQLiteCatalog(path: directory.subpath("catalog.sqlite"))
        let asset = AssetRecord(checksum: checksum(7), kind: .photo, size: 10, originalExtension: "jpg",
                                firstSourcePath: "a.jpg", originalPath: "originals/07/07/x.jpg", importedAt: Date(), runID: "r1")
        var again = asset
        again.firstSourcePath = "b.jpg"
        try await catalog.insertAssets([asset])
        try await catalog.insertAssets([again])
        #expect(try await catalog.assetCount() == 1)
        #expect(try await catalog.asset(checksum(7))?.firstSourcePath == "a.jpg")
        #expect(try await catalog.assetChecksums() == [checksum(7)])
    }

    @Test func runsRecordCountsAndFailures() async throws {
        let directory = try TemporaryDirectory()
        let catalog = try SQLiteCatalog(path: directory.subpath("catalog.sqlite"))
        var run = RunRecord(id: "19700101T000140Z-0001", command: "import", sourceID: nil, startedAt: Date(timeIntervalSince1970: 100))
        try await catalog.startRun(run)
        let id = run.id
        run.outcome = .someFailed
        run.counts.imported = 5
        run.endedAt = Date(timeIntervalSince1970: 160)
        try await catalog.finishRun(run, failures: [RunFailureRecord(runID: id, relativePath: "bad.jpg", phase: .hashing, reason: "gone")])
        let last = try #require(try await catalog.lastRun(command: nil))
        #expect(last.id == id)
        #expect(last.counts.imported == 5)
        #expect(last.outcome == .someFailed)
        #expect(try await catalog.failures(runID: id).map(\.relativePath) == ["bad.jpg"])
        #expect(try await catalog.lastRun(endedIn: [.success]) == nil)
        var later = RunRecord(id: "19700101T000300Z-0002", command: "import", sourceID: nil, startedAt: Date(timeIntervalSince1970: 180))
        later.outcome = .success
        try await catalog.startRun(later)
        #expect(try await catalog.lastRun(command: nil)?.id == later.id)
        #expect(try await catalog.lastRun(endedIn: [.success])?.id == later.id)
    }

    /// Run rows written when the run table had a count type of its own (snake_case names, `files_hashed`) read into
    /// the one `RunCounts`; new rows use the narration's names.
    @Test func runRowsWrittenBeforeTheCountTypesWereOneReadTheirCounts() async throws {
        let directory = try TemporaryDirectory()
        let catalog = try SQLiteCatalog(path: directory.subpath("catalog.sqlite"))
        try await catalog.startRun(RunRecord(id: "19700101T000140Z-0001", command: "import", sourceID: nil,
                                       startedAt: Date(timeIntervalSince1970: 100)))
        try await catalog.write { db in
            try db.execute(sql: """
                UPDATE run SET counts = '{"files_seen":7,"files_hashed":6,"bytes_hashed":600,"imported":4,"duplicates":1,\
                "unchanged":1,"skipped":1,"failed":0,"bytes_copied":400,"kept_without_preview":2,"archived":0,"restored":0}'
                """)
        }
        let old = try #require(try await catalog.lastRun(command: nil)).counts
        #expect([old.filesSeen, old.hashed, old.imported, old.duplicates, old.unchanged, old.keptWithoutPreview] == [7, 6, 4, 1, 1, 2] as [Int])
        #expect(old.bytesHashed == 600 && old.bytesCopied == 400 && old.ready == 0)
        var run = try #require(try await catalog.lastRun(command: nil))
        run.counts.hashed = 3
        try await catalog.finishRun(run, failures: [])
        let written = try await catalog.read { db in try String.fetchOne(db, sql: "SELECT counts FROM run") }
        #expect(written?.contains("\"hashed\":3") == true && written?.contains("files_hashed") == false)
    }
}
