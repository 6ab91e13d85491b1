import CairnTesting
import Foundation
import Testing

/// Drift in the library folder itself: an original removed by hand (or a disk restored from an old backup) is
/// found by a full check, reported, and copied again from the source only when asked.
@Suite struct LibraryDriftTests {
    @Test func anOriginalRemovedFromTheLibraryIsReportedThenCopiedAgainWhenAsked() throws {
        let (folder, files) = try SyncCommandTests.makeSource(count: 3)
        func sync(_ extra: [String]) throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", folder.subpath("src"), "--library", folder.subpath("lib"), "--plain"] + extra)
        }
        #expect(try sync([]).status == 0)
        let originals = (FileManager.default.enumerator(atPath: folder.subpath("lib/originals"))?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".jpg") }
        #expect(originals.count == files.count)
        let lost = folder.subpath("lib/originals/" + originals[0])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: lost))
        try FileManager.default.removeItem(atPath: lost)

        let checked = try sync(["--check-destination"])
        #expect(checked.status == 0, "\(checked.standardOutput)\(checked.standardError)")
        #expect(checked.standardOutput.contains("checked every asset at the destination: 1 gone from it for good"),
                "\(checked.standardOutput)")
        #expect(!FileManager.default.fileExists(atPath: lost), "left alone by default")
        let status = try CairnBinary.run(["status", "--library", folder.subpath("lib")])
        #expect(status.standardOutput.contains("1 gone from it for good"), "\(status.standardOutput)")

        let mended = try sync(["--destination-drift", "restore"])
        #expect(mended.status == 0, "\(mended.standardOutput)\(mended.standardError)")
        #expect(mended.standardOutput.contains("bringing 1 lost there in again"), "\(mended.standardOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: lost)) == bytes)
        let clean = try sync(["--check-destination"])
        #expect(clean.standardOutput.contains("checked every asset at the destination: nothing changed there"),
                "\(clean.standardOutput)")
        let after = try CairnBinary.run(["status", "--library", folder.subpath("lib")])
        #expect(!after.standardOutput.contains("gone from it"), "\(after.standardOutput)")
    }

    /// Every original gone at once looks like an unmounted disk, not like a person's deletions: even with
    /// `--destination-drift restore`, nothing is brought in again, and the run says why.
    @Test func everyOriginalGoneAtOnceIsHeldNotCopiedAgain() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 12)
        func sync(_ extra: [String]) throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", folder.subpath("src"), "--library", folder.subpath("lib"), "--plain"] + extra)
        }
        #expect(try sync([]).status == 0)
        let originals = folder.subpath("lib/originals")
        try FileManager.default.removeItem(atPath: originals)
        try FileManager.default.createDirectory(atPath: originals, withIntermediateDirectories: true)
        let held = try sync(["--check-destination", "--destination-drift", "restore"])
        #expect(held.status == 0, "\(held.standardOutput)\(held.standardError)")
        #expect(held.standardOutput.contains("12 gone from it for good; held: 12 of the destination's assets are missing at once"),
                "\(held.standardOutput)")
        let copied = (FileManager.default.enumerator(atPath: originals)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".jpg") }
        #expect(copied.isEmpty, "nothing brought in again: \(copied)")
    }
}
