import CairnCore
import CairnReconcile
import CairnTesting
import Foundation
import GRDB
import Testing

@testable import CairnCatalog
import CairnReconcileOracle
@testable import CairnSync

/// A sync reconciles in each catalog's SQL over its run tables (`CatalogReconciliation`); the pure engine over
/// in-memory sets (`Reconciler.reconcile`) is its specification. Two libraries live through the same random runs,
/// the model reconciled by the engine (its stores in SQLite), the other by the catalog under test (SQLite or
/// PostgreSQL): every run must give the same plan and signals, and leave the same stores.
@Suite struct ReconcileRunContractTests {
    /// Ten plain names, one that another begins with, and one beyond ASCII (paths are compared as bytes).
    static let paths = (0..<10).map { "d\($0 % 3)/IMG_\($0).jpg" } + ["d1/IMG_1.jpg.jpg", "d1/\u{e9}t\u{e9}.jpg"]
    static let contents = 12

    static func content(_ index: Int) -> Checksum { Checksum(bytes: [UInt8](repeating: UInt8(index + 1), count: 20))! }

    /// The model library: its SQLite catalog, the synced source and another source of the same library.
    struct Side {
        let catalog: SQLiteCatalog
        let source: Int64
        let other: Int64

        init(_ path: String) async throws {
            catalog = try SQLiteCatalog(path: path)
            source = try await catalog.sourceID(forRoot: "/src")
            other = try await catalog.sourceID(forRoot: "/other")
        }

        func setLibrary(_ held: Set<Int>) async throws {
            try await catalog.write { db in try db.execute(sql: "DELETE FROM asset") }
            try await catalog.insertAssets(held.sorted().map {
                AssetRecord(checksum: ReconcileRunContractTests.content($0), kind: .photo, size: 1, originalExtension: "jpg",
                            firstSourcePath: "x\($0).jpg", originalPath: "originals/x\($0).jpg",
                            importedAt: Date(timeIntervalSince1970: 0), runID: nil)
            })
        }

        func setOtherSource(_ held: Set<Int>) async throws {
            try await catalog.write { db in
                try db.execute(sql: "DELETE FROM source_file WHERE source_id = ?", arguments: [other])
            }
            try await catalog.updateSnapshot(sourceID: other, upserting: held.sorted().map {
                ReconcileRunContractTests.file("o\($0).jpg", inode: UInt64($0), checksum: ReconcileRunContractTests.content($0))
            }, removing: [])
        }

        /// What a test compares: every store, the snapshot, the facts and the waiting list.
        func stores() async throws -> (ReconcileState, [String: Checksum], ReconcileSourceFacts, [PendingItem]) {
            (try await catalog.reconcileState(sourceID: source), try await catalog.healthySnapshot(sourceID: source),
             try await catalog.reconcileFacts(sourceID: source), try await catalog.pending(sourceID: source))
        }
    }

    /// The library reconciled by the catalog under test, through its interfaces only.
    struct Tested {
        let catalog: any CatalogUnderTest
        let source: Int64
        let other: Int64

        init(_ catalog: any CatalogUnderTest) async throws {
            self.catalog = catalog
            source = try await catalog.sourceID(forRoot: "/src")
            other = try await catalog.sourceID(forRoot: "/other")
        }

        /// The library holds exactly `held` (content taken out goes through the trash and is forgotten).
        func setLibrary(_ held: Set<Int>) async throws {
            let gone = try await catalog.assetChecksums().filter { checksum in
                !held.contains { ReconcileRunContractTests.content($0) == checksum }
            }
            try await catalog.markTrashed(gone.map { (checksum: $0, libraryPaths: []) }, runID: "setup", at: Date())
            try await catalog.forgetTrashed(runIDs: ["setup"])
            try await catalog.insertAssets(held.sorted().map {
                AssetRecord(checksum: ReconcileRunContractTests.content($0), kind: .photo, size: 1, originalExtension: "jpg",
                            firstSourcePath: "x\($0).jpg", originalPath: "originals/x\($0).jpg",
                            importedAt: Date(timeIntervalSince1970: 0), runID: nil)
            })
        }

        func setOtherSource(_ held: Set<Int>) async throws {
            let files = held.sorted().map {
                ReconcileRunContractTests.file("o\($0).jpg", inode: UInt64($0), checksum: ReconcileRunContractTests.content($0))
            }
            let kept = Set(files.map(\.relativePath))
            let gone = try await catalog.snapshot(sourceID: other).keys.filter { !kept.contains($0) }
            try await catalog.updateSnapshot(sourceID: other, upserting: files, removing: Array(gone))
        }

        func stores() async throws -> (ReconcileState, [String: Checksum], ReconcileSourceFacts, [PendingItem]) {
            (try await catalog.reconcileState(sourceID: source), try await catalog.healthySnapshot(sourceID: source),
             try await catalog.reconcileFacts(sourceID: source), try await catalog.pending(sourceID: source))
        }

        /// One sync's run tables and reconciliation: the walk of `files` (path → content), hashing (`failed` cannot
        /// be read), classification, then the catalog's reconciliation and, unless `commits` is false, its commit.
        func sync(_ files: [String: Int], inodes: [String: UInt64], failed: Set<String>, scan: SourceScanFacts,
                  settings: ReconcileSettings, now: Date, runID: String, acceptMassVanish: Bool = false)
            async throws -> CatalogReconciliation {
            try await catalog.withRunTables(sourceID: source) { runFiles in
                try await runFiles.append(files.keys.sorted().map { ReconcileRunContractTests.file($0, inode: inodes[$0]!) })
                _ = try await runFiles.matchSnapshot()
                let toHash = try await runFiles.filesToHash(after: 0, limit: 100, byteLimit: 1 << 30)
                var hashed: [RunFile] = []
                var unreadable: [Int64: FailureReason] = [:]
                for var file in toHash {
                    if failed.contains(file.record.relativePath) {
                        unreadable[file.id] = "unreadable"
                    } else {
                        file.record.checksum = ReconcileRunContractTests.content(files[file.record.relativePath]!)
                        hashed.append(file)
                    }
                }
                try await runFiles.recordHashes(hashed, failed: unreadable, updatingSnapshot: true)
                _ = try await runFiles.classify()
                let reconciliation = try await CatalogReconciliation.reconcile(
                    runFiles: runFiles, catalog: catalog, scan: scan, settings: settings, now: now, runID: runID,
                    acceptMassVanish: acceptMassVanish)
                try await reconciliation.commit(runFiles: runFiles)
                return reconciliation
            }
        }
    }

    static func file(_ path: String, inode: UInt64, checksum: Checksum? = nil) -> SourceFile {
        SourceFile(relativePath: path, fingerprint: FileFingerprint(device: 1, inode: inode, size: 1,
                                                                          modificationTimeNanoseconds: 1),
                         checksum: checksum, kind: .photo)
    }

    /// The source as one scan sees it.
    struct Scan {
        /// Path → content index of the files present.
        var files: [String: Int] = [:]
        /// Path → inode: a file with the inode of the last scan takes its checksum from the snapshot.
        var inodes: [String: UInt64] = [:]
        /// Present files whose hashing fails: they keep their last checksum and make the scan unhealthy.
        var failed: Set<String> = []
        var hasMarker = true
        var root: SourceScanFacts.RootState = .directory
    }

    /// How often the random runs reached each case: their agreement only counts where they went.
    struct Reached {
        var stamped = 0, reappeared = 0, released = 0, edited = 0, unhealthy = 0, failedFiles = 0
        var trash = 0, quarantine = 0, review = 0, held = 0, deferred = 0, approved = 0
    }

    @Test(arguments: CatalogBackend.allCases)
    func theCatalogsSQLPlansAndStoresWhatTheEngineDoes(_ backend: CatalogBackend) async throws {
        var reached = Reached()
        for seed in UInt64(0)..<32 {
            try await backend.withCatalog { catalog in
                try await compareOnRandomRuns(seed: seed, tested: Tested(catalog), reached: &reached)
            }
        }
        // Each case must have come up in several runs, or a difference there could go unseen.
        for (name, count) in [("stamped", reached.stamped), ("reappeared", reached.reappeared),
                              ("released", reached.released), ("edited", reached.edited),
                              ("unhealthy", reached.unhealthy), ("failed files", reached.failedFiles),
                              ("trash", reached.trash), ("quarantine", reached.quarantine), ("review", reached.review),
                              ("held", reached.held), ("deferred", reached.deferred), ("approved", reached.approved)] {
            #expect(count >= 3, "the random runs reached \(name) only \(count) times")
        }
    }

    func compareOnRandomRuns(seed: UInt64, tested sql: Tested, reached: inout Reached) async throws {
        let directory = try TemporaryDirectory()
        let model = try await Side(directory.subpath("model.sqlite"))
        var random = SplitMix64(seed: seed &* 7919 &+ 1)
        func chance(_ p: Double) -> Bool { random.nextUnit() < p }
        func pick(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }

        var scan = Scan()
        var cache: [String: Checksum] = [:]  // the scanner's cache (source_file): what a failed file falls back to
        var nextInode: UInt64 = 1000
        var library = Set<Int>()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var lastPlan: ReconciliationPlan?

        for step in 0..<14 {
            let now = start.addingTimeInterval(Double(step) * 3 * 86_400)
            let runID = "run-\(step)"
            // The source changes: files come, go and are edited; a whole source can vanish or lose its marker.
            scan.failed = []
            for path in Self.paths {
                let present = scan.files[path] != nil
                if !present, chance(0.35) {
                    scan.files[path] = pick(Self.contents)
                    scan.inodes[path] = nextInode; nextInode += 1
                } else if present, chance(0.2) {
                    scan.files[path] = nil
                } else if present, chance(0.15) {
                    scan.files[path] = pick(Self.contents)
                    scan.inodes[path] = nextInode; nextInode += 1
                } else if present, chance(0.15) {
                    scan.inodes[path] = nextInode; nextInode += 1  // touched, same content: hashed again
                    if cache[path] != nil, chance(0.3) { scan.failed.insert(path) }
                }
            }
            if chance(0.08) { scan.files = [:] }
            scan.hasMarker = chance(0.9)
            scan.root = chance(0.05) ? .missing : .directory
            // The library imports some of what it lacks and loses some to the trash; another source holds a few.
            if let lastPlan {
                for checksum in lastPlan.importCandidates where chance(0.8) {
                    if let index = (0..<Self.contents).first(where: { Self.content($0) == checksum }) { library.insert(index) }
                }
            }
            // In order: a set's order changes from process to process, and the draws must not.
            for index in library.sorted() where chance(0.1) { library.remove(index) }
            let elsewhere = Set((0..<Self.contents).filter { _ in chance(0.1) })
            try await model.setLibrary(library)
            try await model.setOtherSource(elsewhere)
            try await sql.setLibrary(library)
            try await sql.setOtherSource(elsewhere)
            // A person approves or excludes some content the source showed.
            let observed = try await model.catalog.reconcileState(sourceID: model.source).observed.sorted()
            if !observed.isEmpty, chance(0.3) {
                let checksum = observed[pick(observed.count)]
                let approve = chance(0.5)
                if approve {
                    try await model.catalog.approve([checksum], sourceIDs: [model.source], at: now)
                    try await sql.catalog.approve([checksum], sourceIDs: [sql.source], at: now)
                } else {
                    try await model.catalog.exclude([checksum], sourceIDs: [model.source], at: now)
                    try await sql.catalog.exclude([checksum], sourceIDs: [sql.source], at: now)
                }
            }
            let settings = try ReconcileSettings(
                quarantineDays: [0, 4, 14][pick(3)], strictness: chance(0.5) ? .trusting : .strict,
                maxDelete: chance(0.2) ? 1 : nil, vanishThreshold: chance(0.5) ? 0.5 : 0.9, massOffloadThreshold: 2)
            let acceptVanished = chance(0.2)

            let walked = scan.root == .directory ? scan.files.keys.sorted() : []
            var current: [String: Checksum] = [:]
            for path in walked {
                current[path] = scan.failed.contains(path) ? cache[path]! : Self.content(scan.files[path]!)
            }
            for path in walked where !scan.failed.contains(path) { cache[path] = Self.content(scan.files[path]!) }
            let issues = walked.filter { scan.failed.contains($0) }

            // The engine over in-memory sets, committed the in-memory way.
            let facts = try await model.catalog.reconcileFacts(sourceID: model.source)
            var facts0 = SourceScanFacts(sourceRoot: "/src", root: scan.root, hasMarker: scan.root == .directory && scan.hasMarker,
                                         ioErrorCount: issues.count, firstIOError: issues.first)
            let scanFacts = facts0
            facts0.hadMarker = facts.hadMarker
            let library = try await model.catalog.assetChecksums()
            let heldElsewhere = try await model.catalog.checksumsHeld(bySourcesOtherThan: model.source)
            let input = Reconciler.Input(
                state: try await model.catalog.reconcileState(sourceID: model.source),
                previous: try await model.catalog.healthySnapshot(sourceID: model.source), current: current,
                library: library, scan: facts0, settings: settings, now: now, runID: runID,
                isFirstRun: facts.isFirstRun, acceptMassVanish: acceptVanished, heldElsewhere: heldElsewhere)
            let outcome = Reconciler.reconcile(input)
            try await model.catalog.commit(outcome, sourceID: model.source, current: current, scan: input.scan)

            // The catalog's SQL, over the run tables as the walk and hashing leave them.
            let reconciliation = try await sql.sync(
                scan.root == .directory ? scan.files : [:], inodes: scan.inodes, failed: scan.failed, scan: scanFacts,
                settings: settings, now: now, runID: runID, acceptMassVanish: acceptVanished)

            let context = "seed \(seed), run \(step)"
            #expect(reconciliation.plan == outcome.plan, "\(context)")
            #expect(reconciliation.sourceIsHealthy == outcome.delta.advanceSnapshot, "\(context)")
            #expect(reconciliation.signals.stamped == outcome.delta.confirmedStamped, "\(context)")
            #expect(reconciliation.signals.reappeared == outcome.delta.reappeared, "\(context)")
            #expect(reconciliation.signals.deletedPaths == outcome.delta.deletedPaths, "\(context)")
            #expect(reconciliation.signals.editedPaths == outcome.delta.editedPaths, "\(context)")
            #expect(reconciliation.signals.releasedPaths == outcome.delta.anchorsReleased, "\(context)")
            #expect(reconciliation.comparison.currentFiles == current.count, "\(context)")
            let (modelState, modelSnapshot, modelFacts, modelPending) = try await model.stores()
            let (sqlState, sqlSnapshot, sqlFacts, sqlPending) = try await sql.stores()
            #expect(sqlState == modelState, "\(context)")
            #expect(sqlSnapshot == modelSnapshot, "\(context)")
            #expect(sqlFacts == modelFacts, "\(context)")
            #expect(sqlPending == modelPending, "\(context)")
            lastPlan = outcome.plan
            let plan = outcome.plan, delta = outcome.delta
            reached.stamped += delta.confirmedStamped.isEmpty ? 0 : 1
            reached.reappeared += delta.reappeared.isEmpty ? 0 : 1
            reached.released += delta.anchorsReleased.isEmpty ? 0 : 1
            reached.edited += delta.editedPaths.isEmpty ? 0 : 1
            reached.unhealthy += delta.advanceSnapshot ? 0 : 1
            reached.failedFiles += issues.isEmpty ? 0 : 1
            reached.trash += plan.deleteCandidates.isEmpty ? 0 : 1
            reached.quarantine += plan.heldByQuarantine.isEmpty ? 0 : 1
            reached.review += plan.pendingReview.isEmpty ? 0 : 1
            reached.held += plan.heldBySafetyRail.isEmpty ? 0 : 1
            reached.deferred += plan.deferredByCap.isEmpty ? 0 : 1
            reached.approved += plan.deleteCandidates.contains { $0.basis == .approved } ? 1 : 0
        }
    }

    /// The decisions that matter, reached on purpose through the SQL path alone: a doubtful scan confirms nothing,
    /// a healthy one confirms and quarantines, an edit's original is protected while its path lives, and released
    /// when it dies.
    @Test(arguments: CatalogBackend.allCases)
    func aScriptedSyncConfirmsProtectsAndReleasesInSQL(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let side = try await Tested(catalog)
            let t0 = Date(timeIntervalSince1970: 1_800_000_000)
            func run(_ files: [String: Int], failed: Set<String> = [], now: Date, inodeBase: UInt64) async throws
                -> CatalogReconciliation {
                let inodes = Dictionary(uniqueKeysWithValues: files.keys.sorted().enumerated().map { ($1, inodeBase + UInt64($0)) })
                return try await side.sync(files, inodes: inodes, failed: failed,
                                           scan: SourceScanFacts(sourceRoot: "/src", ioErrorCount: failed.count),
                                           settings: .defaults, now: now, runID: "r\(inodeBase)")
            }
            try await side.setLibrary([0, 1, 2, 3, 4])
            let first = try await run(["a.jpg": 0, "b.jpg": 1, "c.jpg": 2, "d.jpg": 3, "e.jpg": 4], now: t0, inodeBase: 100)
            #expect(first.plan.importCandidates.isEmpty)
            #expect(first.sourceIsHealthy)

            // b.jpg is deleted, c.jpg edited (to content 5, new to the library), d.jpg cannot be read.
            let second = try await run(["a.jpg": 0, "c.jpg": 5, "d.jpg": 3, "e.jpg": 4], failed: ["d.jpg"], now: t0,
                                       inodeBase: 200)
            #expect(!second.sourceIsHealthy, "an unreadable file makes the scan doubtful: nothing is confirmed")
            #expect(second.signals.stamped.isEmpty)
            #expect(second.plan.importCandidates == [Self.content(5)])
            #expect(second.plan.heldBySafetyRail.map(\.checksum) == [Self.content(1)])

            // Read again, healthy: b.jpg's content is confirmed and waits in quarantine; c.jpg's original is its anchor.
            let third = try await run(["a.jpg": 0, "c.jpg": 5, "d.jpg": 3, "e.jpg": 4], now: t0, inodeBase: 300)
            #expect(third.sourceIsHealthy)
            #expect(third.signals.deletedPaths == ["b.jpg"])
            #expect(third.signals.stamped == [Self.content(1)])
            #expect(third.plan.heldByQuarantine.map(\.checksum) == [Self.content(1)])
            #expect(third.plan.deleteCandidates.isEmpty, "the edited photo's original is protected while c.jpg lives")

            // Fifteen days later b.jpg's content may go; c.jpg is deleted: its anchor and its edit go to quarantine.
            let later = t0.addingTimeInterval(15 * 86_400)
            let fourth = try await run(["a.jpg": 0, "d.jpg": 3, "e.jpg": 4], now: later, inodeBase: 400)
            #expect(fourth.plan.deleteCandidates.map(\.checksum) == [Self.content(1)])
            #expect(fourth.signals.releasedPaths == ["c.jpg"])
            #expect(Set(fourth.signals.stamped) == [Self.content(2), Self.content(5)])
            #expect(fourth.plan.heldByQuarantine.map(\.checksum) == [Self.content(2)], "content 5 was never imported")
            #expect(try await catalog.healthySnapshot(sourceID: side.source).keys.sorted() == ["a.jpg", "d.jpg", "e.jpg"])
        }
    }
}
