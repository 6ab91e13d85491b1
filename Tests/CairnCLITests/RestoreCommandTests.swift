import CairnCatalog
import CairnCore
import CairnReconcile
import CairnTesting
import Foundation
import Testing

@testable import CairnLibrary
@testable import CairnTrash

@Suite struct RestoreCommandTests {
    let runID = "20261122T040000Z-test"

    /// Trashes the asset imported from a.jpg the way a sync does; returns its original's library path.
    func trashA(_ fixture: ImportedLibrary) async throws -> (Checksum, String) {
        let (library, catalog) = try fixture.open()
        let asset = try await fixture.asset("a.jpg", in: catalog)
        let summary = try await DeletionRun(library: library, catalog: catalog).trash(
            [DeleteCandidate(checksum: asset.checksum, basis: .confirmed, confirmedAt: Date())], runID: runID, now: Date())
        #expect(summary.trashed.count == 1)
        return (asset.checksum, asset.originalPath)
    }

    @Test func journalShowsTheTrashAndRestorePutsTheFileBackByteIdentical() async throws {
        let fixture = try ImportedLibrary()
        let (sum, original) = try await trashA(fixture)
        #expect(!fixture.exists(original))
        // The original moves with its derived files (thumbnail, preview, clip).
        let moved = Self.filesBelow(fixture.folder.subpath("lib/trash/\(runID)"))
        #expect(moved >= 2)

        let list = try fixture.cairn(["journal", "list"])
        #expect(list.status == 0, "\(list.standardError)")
        #expect(list.standardOutput.contains("\(runID)  ") && list.standardOutput.contains("trashed 1 asset(s), \(moved) file(s)"))
        let show = try fixture.cairn(["journal", "show", "--last"])
        #expect(show.status == 0)
        #expect(show.standardOutput.contains("trash    \(sum.hex)  source a.jpg"))
        #expect(show.standardOutput.contains("    \(original)"))

        let restore = try fixture.cairn(["restore", "--run-id", runID, "--asset", sum.hex])
        #expect(restore.status == 0, "\(restore.standardError)")
        #expect(restore.standardOutput.hasPrefix("Restored 1 asset(s), \(moved) file(s) from trash/\(runID)"))
        #expect(try fixture.bytes(original) == fixture.files["a.jpg"])
        #expect(try await fixture.open().catalog.asset(sum) != nil)

        let after = try fixture.cairn(["journal", "show", "--run-id", runID])
        #expect(after.standardOutput.contains("restore  \(sum.hex)"))
        let again = try fixture.cairn(["restore", "--run-id", runID])
        #expect(again.status == 0 && again.standardOutput.contains("Nothing left to restore"))
        let unmatched = try fixture.cairn(["restore", "--run-id", runID, "--file-name-matches", "zzz"])
        #expect(unmatched.status == 1 && unmatched.standardError.contains("matched"))
    }

    @Test func restoreByFileNameOnlyTouchesMatchingAssets() async throws {
        let fixture = try ImportedLibrary()
        let (library, catalog) = try fixture.open()
        let assets = try await catalog.allAssets()
        _ = try await DeletionRun(library: library, catalog: catalog).trash(
            assets.map { DeleteCandidate(checksum: $0.checksum, basis: .unconfirmed) }, runID: runID, now: Date())
        let restore = try fixture.cairn(["restore", "--run-id", runID, "--file-name-matches", "^b\\."])
        #expect(restore.status == 0, "\(restore.standardError)")
        let b = try #require(assets.first { $0.firstSourcePath == "b.jpg" })
        let a = try #require(assets.first { $0.firstSourcePath == "a.jpg" })
        #expect(fixture.exists(b.originalPath) && !fixture.exists(a.originalPath))
    }

    @Test func aHeldLockStopsRestoreAtOnceWithItsExitCode() async throws {
        let fixture = try ImportedLibrary()
        _ = try await trashA(fixture)
        let lock = try LibraryLock(libraryRoot: fixture.root)
        let result = try fixture.cairn(["restore", "--run-id", runID])
        withExtendedLifetime(lock) {}
        #expect(result.status == ExitStatus.libraryLocked.rawValue)
        #expect(result.standardError.contains("is locked (held by pid \(getpid())"))
        #expect(fixture.exists("trash/\(runID)"))
    }

    @Test func unknownRunAndBadArgumentsAreRefused() throws {
        let fixture = try ImportedLibrary()
        let unknown = try fixture.cairn(["restore", "--run-id", "nope"])
        #expect(unknown.status == ExitStatus.failure.rawValue)
        #expect(unknown.standardError.contains("run nope: it trashed nothing"))
        let badAsset = try fixture.cairn(["restore", "--run-id", runID, "--asset", "xyz"])
        #expect(badAsset.status == ExitStatus.usage.rawValue && badAsset.standardError.contains("not a SHA1"))
        let badRegex = try fixture.cairn(["restore", "--run-id", runID, "--file-name-matches", "(["])
        #expect(badRegex.status == ExitStatus.usage.rawValue && badRegex.standardError.contains("not a valid regular expression"))
        let noLibrary = try CairnBinary.run(["journal", "list", "--library", fixture.folder.subpath("none")])
        #expect(noLibrary.status == 1 && noLibrary.standardError.contains("no cairn library here"))
    }

    @Test func purgeDeletesOldTrashForGoodAndJournalsIt() async throws {
        let fixture = try ImportedLibrary()
        let (sum, _) = try await trashA(fixture)
        let moved = Self.filesBelow(fixture.folder.subpath("lib/trash/\(runID)"))
        let kept = try fixture.cairn(["trash", "purge", "--older-than", "1"])
        #expect(kept.status == 0 && kept.standardOutput.hasPrefix("Purged 0 run(s), 0 file(s); kept 1 run(s)"))
        let purged = try fixture.cairn(["trash", "purge", "--older-than", "0"])
        #expect(purged.status == 0, "\(purged.standardError)")
        #expect(purged.standardOutput.hasPrefix("Purged 1 run(s), \(moved) file(s)"))
        #expect(!fixture.exists("trash/\(runID)"))
        #expect(try await fixture.open().catalog.trashedAssets(runID: nil).isEmpty)
        let journal = try fixture.cairn(["journal", "list"])
        #expect(journal.standardOutput.contains("purged \(moved) file(s)"))
        #expect(try await fixture.open().catalog.asset(sum) == nil)
    }

    static func filesBelow(_ root: String) -> Int {
        (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter { relative in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.count
    }
}
