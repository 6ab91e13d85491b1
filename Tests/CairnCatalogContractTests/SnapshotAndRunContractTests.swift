import CairnCatalog
import CairnCore
import CairnPostgresCatalog
import CairnReconcileOracle
import Foundation
import Testing

/// What every catalog backend must do with sources' snapshots and with runs: each test runs on every
/// `CatalogBackend` with the same expectations.
@Suite struct SnapshotAndRunContractTests {
    static func file(_ path: String, inode: UInt64, checksum: Int?, kind: MediaKind = .photo) -> SourceFile {
        SourceFile(relativePath: path,
                   fingerprint: FileFingerprint(device: 2049, inode: inode, size: Int64(inode) * 1000,
                                                modificationTimeNanoseconds: 1_795_000_000_123_456_789 + Int64(inode)),
                   checksum: checksum.map { Checksum(hex: String(format: "%040x", $0))! }, kind: kind)
    }

    @Test(arguments: CatalogBackend.allCases)
    func aSnapshotKeepsEachFilesFingerprintAndChecksumAndFollowsTheSourcesChanges(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let photos = try await catalog.sourceID(forRoot: "/photos")
            let camera = try await catalog.sourceID(forRoot: "/camera")
            let first = [Self.file("a.jpg", inode: 1, checksum: 1), Self.file("b/c.mov", inode: 2, checksum: 2, kind: .video),
                         Self.file("new.heic", inode: 3, checksum: nil), Self.file("notes.txt", inode: 4, checksum: nil, kind: .other)]
            try await catalog.updateSnapshot(sourceID: photos, upserting: first, removing: [])
            #expect(try await catalog.snapshot(sourceID: photos) == Dictionary(uniqueKeysWithValues: first.map { ($0.relativePath, $0) }))
            #expect(try await catalog.snapshot(sourceID: camera).isEmpty)

            // A file hashed since, one changed (the later of two sightings in a batch wins), one gone.
            let hashed = Self.file("new.heic", inode: 3, checksum: 3)
            let changed = Self.file("a.jpg", inode: 9, checksum: 9)
            try await catalog.updateSnapshot(sourceID: photos, upserting: [Self.file("a.jpg", inode: 8, checksum: 8), hashed, changed],
                                             removing: ["b/c.mov", "never-there.jpg"])
            let second = try await catalog.snapshot(sourceID: photos)
            #expect(second == ["a.jpg": changed, "new.heic": hashed, "notes.txt": first[3]])

            try await catalog.updateSnapshot(sourceID: camera, upserting: [Self.file("DCIM/1.jpg", inode: 5, checksum: 1)], removing: [])
            let checksum = { (number: Int) in Checksum(hex: String(format: "%040x", number))! }
            #expect(try await catalog.checksumsHeld(bySourcesOtherThan: photos) == [checksum(1)])
            #expect(try await catalog.checksumsHeld(bySourcesOtherThan: camera) == [checksum(9), checksum(3)])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aRunIsRecordedAsItStartsAndAsItEndsWithItsFailures(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            let start = Date(timeIntervalSince1970: 1_795_000_000)
            let sync = RunRecord(id: "20261126T220000Z-aaaa", command: "sync", sourceID: source, startedAt: start)
            var imported = RunRecord(id: "20261126T230000Z-bbbb", command: "import", sourceID: source,
                                     startedAt: start.addingTimeInterval(3600))
            let status = RunRecord(id: "20261126T233000Z-cccc", command: "status", sourceID: nil,
                                   startedAt: start.addingTimeInterval(5400))
            for run in [sync, imported, status] { try await catalog.startRun(run) }
            #expect(try await catalog.run(id: imported.id) == imported)
            #expect(try await catalog.lastRun(command: nil) == status)

            imported.endedAt = start.addingTimeInterval(3700)
            imported.outcome = .someFailed
            imported.message = "2 files failed"
            imported.counts.filesSeen = 12
            imported.counts.imported = 9
            imported.counts.failed = 2
            imported.counts.bytesCopied = 9_876_543_210
            imported.summary = #"{"timeline":[]}"#
            let failures = [
                RunFailureRecord(runID: imported.id, relativePath: "z/broken.jpg", phase: .thumbnail, reason: "not a JPEG",
                                 category: .corrupt),
                // A failure without its category, as rows written before categories were kept.
                RunFailureRecord(runID: imported.id, relativePath: "a/gone.mov", phase: .transfer, reason: "EIO"),
            ]
            try await catalog.finishRun(imported, failures: failures)

            #expect(try await catalog.run(id: imported.id) == imported)
            #expect(try await catalog.lastRun(command: "import") == imported)
            #expect(try await catalog.lastRun(command: "restore") == nil)
            #expect(try await catalog.runs(limit: 2).map(\.id) == [status.id, imported.id])
            #expect(try await catalog.failures(runID: imported.id) == failures.reversed())
            #expect(try await catalog.failures(runID: sync.id).isEmpty)
            #expect(try await catalog.run(id: "no-such-run") == nil)
            await #expect(throws: (any Error).self, "one id, one run") { try await catalog.startRun(sync) }
        }
    }

    @Test func aPostgresCatalogsFailureSaysWhatFailedAndWhyInOneLine() async throws {
        try await PostgresCatalog.withCatalog(at: try CatalogBackend.freshDatabase(), library: "/library") { catalog in
            let run = RunRecord(id: "20261126T220000Z-aaaa", command: "sync", sourceID: nil, startedAt: Date())
            try await catalog.startRun(run)
            let error = await #expect(throws: PostgresCatalogError.self) { try await catalog.startRun(run) }
            let message = try #require(error).description
            #expect(message.hasPrefix("the catalog could not record the start of run \(run.id): the server said: duplicate key"))
            #expect(!message.contains("\n"))
        }
    }
}
