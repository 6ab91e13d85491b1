import CairnCatalog
import CairnCore
import CairnReconcile
import CairnTesting
import Foundation
import Testing

@testable import CairnImport
@testable import CairnLibrary
import CairnReconcileOracle
@testable import CairnSync
@testable import CairnTrash

/// The sync's deletion side wired as `cairn sync` will wire it: import, reconcile from the catalog,
/// commit, trash, restore. Real folders, real catalog.
@Suite struct DeletionWiringTests {
    struct Harness {
        let folder: TemporaryDirectory
        let library: Library
        let catalog: SQLiteCatalog
        var sourceRoot: String { folder.subpath("src") }
        var clock = Date(timeIntervalSince1970: 1_800_000_000)
        var runs = 0

        init(files: [String: Data]) throws {
            folder = try TemporaryDirectory()
            for (name, data) in files { try folder.write(data, to: "src/" + name) }
            library = try Library(root: folder.subpath("lib"))
            catalog = try library.openCatalog()
        }

        /// One sync: import, then reconcile and commit; trashes when `apply`. Returns the plan and what was trashed.
        mutating func sync(settings: ReconcileSettings, apply: Bool) async throws -> (ReconciliationPlan, DeletionRun.Summary) {
            runs += 1
            clock = clock.addingTimeInterval(86_400)
            let runID = "sync-\(runs)"
            let resolved = FileSystem.resolved(sourceRoot)
            var current: [String: Checksum] = [:]
            let sourceID: Int64
            if let resolved {
                _ = try await ImportRun(library: library, catalog: catalog, options: ImportOptions(source: resolved)).run()
                sourceID = try await catalog.sourceID(forRoot: resolved)
                for (path, record) in try await catalog.snapshot(sourceID: sourceID) { current[path] = record.checksum }
            } else {
                sourceID = try #require(try await catalog.sources().first?.id)
            }
            let scan = ReconcileInputs.probe(sourceRoot: sourceRoot)
            let input = try await ReconcileInputs.load(catalog: catalog, sourceID: sourceID, current: current, scan: scan,
                                                 settings: settings, now: clock, runID: runID)
            let outcome = Reconciler.reconcile(input)
            try await catalog.commit(outcome, sourceID: sourceID, current: current, scan: input.scan)
            let trashed = apply
                ? try await DeletionRun(library: library, catalog: catalog)
                    .trash(outcome.plan.deleteCandidates, runID: runID, now: clock)
                : DeletionRun.Summary()
            return (outcome.plan, trashed)
        }
    }

    static let files = (0..<5).reduce(into: [String: Data]()) { files, index in
        files["IMG_\(index).JPG"] = try! DistinctJPEG.data(byteCount: 3_000, seed: UInt8(index))
    }

    @Test func aDeletedFileIsQuarantinedThenTrashedThenRestoredByteIdentical() async throws {
        var harness = try Harness(files: Self.files)
        let quarantine = try ReconcileSettings(quarantineDays: 14)
        let (first, firstTrash) = try await harness.sync(settings: quarantine, apply: true)
        #expect(first.verdict.holds.map(\.rail) == [.firstRun] && firstTrash.trashed.isEmpty)

        try FileManager.default.removeItem(atPath: harness.folder.subpath("src/IMG_1.JPG"))
        let (held, none) = try await harness.sync(settings: quarantine, apply: true)
        #expect(held.heldByQuarantine.count == 1 && held.deleteCandidates.isEmpty && none.trashed.isEmpty)
        #expect(held.heldByQuarantine.first?.eligibleAt == harness.clock.addingTimeInterval(14 * 86_400))
        #expect(try await harness.catalog.pending(sourceID: nil).map(\.status) == [.quarantine])

        let (plan, trashed) = try await harness.sync(settings: try ReconcileSettings(quarantineDays: 0), apply: true)
        #expect(plan.deleteCandidates.count == 1 && trashed.trashed.count == 1)
        let asset = try #require(try await harness.catalog.trashedAssets(runID: nil).first?.asset)
        #expect(asset.firstSourcePath == "IMG_1.JPG")
        #expect(!FileSystem.exists(harness.library.layout.absolute(asset.originalPath)))
        #expect(try await harness.catalog.assetCount() == 4)

        let restored = try await TrashMaintenance(library: harness.library, catalog: harness.catalog)
            .restore(runID: "sync-3", now: harness.clock)
        #expect(restored.assetsBack == [asset.checksum])
        let back = try Data(contentsOf: URL(fileURLWithPath: harness.library.layout.absolute(asset.originalPath)))
        #expect(back == Self.files["IMG_1.JPG"])
        // Excluded on restore: the next sync keeps it.
        let (after, _) = try await harness.sync(settings: try ReconcileSettings(quarantineDays: 0), apply: true)
        #expect(after.deleteCandidates.isEmpty && after.heldByQuarantine.isEmpty)
    }

    @Test func aSourceRenamedAwayOrMostlyEmptiedTrashesNothing() async throws {
        var harness = try Harness(files: Self.files)
        let settings = try ReconcileSettings(quarantineDays: 0)
        _ = try await harness.sync(settings: settings, apply: true)
        _ = try await harness.sync(settings: settings, apply: true)

        for name in ["IMG_0.JPG", "IMG_1.JPG", "IMG_2.JPG"] {
            try FileManager.default.removeItem(atPath: harness.folder.subpath("src/" + name))
        }
        let (vanished, none) = try await harness.sync(settings: settings, apply: true)
        #expect(vanished.verdict.holds.map(\.rail) == [.massVanish] && vanished.exitStatus == .deletionsHeldBySafetyRail)
        #expect(vanished.heldBySafetyRail.count == 3 && none.trashed.isEmpty)

        try FileManager.default.moveItem(atPath: harness.sourceRoot, toPath: harness.folder.subpath("renamed"))
        let (missing, nothing) = try await harness.sync(settings: settings, apply: true)
        #expect(missing.verdict.holds.map(\.rail) == [.sourceMissing] && missing.exitStatus == .deletionsHeldBySafetyRail)
        #expect(nothing.trashed.isEmpty)
        #expect(try await harness.catalog.assetCount() == 5)
    }
}
