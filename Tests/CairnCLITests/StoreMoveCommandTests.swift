import CairnS3
import CairnStore
import CairnTesting
import Foundation
import Testing

/// `cairn store move` as a real process against the suite's SeaweedFS: a folder library's files end in the store,
/// the library uses it from then on, and a file damaged on the disk stops the move before anything changes.
@Suite struct StoreMoveCommandTests {
    @Test func aFolderLibraryMovesOntoAStoreOnlyOnceEveryFileIsThereAndKeepsWorkingFromIt() async throws {
        let library = try ImportedLibrary(files: ["a.jpg", "b.jpg", "c/d.jpg"])
        try library.folder.write(Data("<x:xmpmeta/>".utf8), to: "src/a.jpg.xmp")
        let sidecarRun = try library.cairn(["import", library.source])
        #expect(sidecarRun.status == 0, "\(sidecarRun.standardError)")
        let environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let before = StoreImportTests.mediaFiles(in: library.root)
        #expect(before.count >= 7, "\(before)")  // three originals, their thumbnails and previews, a sidecar

        // An original whose bytes no longer hash to its name (the same size, one byte changed): the store refuses
        // it, and the library stays in its folder, untouched.
        let original = try #require(before.first { $0.hasPrefix("originals/") })
        let path = library.root + "/" + original
        let good = try Data(contentsOf: URL(fileURLWithPath: path))
        var damaged = good
        damaged[damaged.count - 1] ^= 0xFF
        try damaged.write(to: URL(fileURLWithPath: path))
        let refused = try library.cairn(["store", "move", "--to", location], environment: environment)
        #expect(refused.status == 3, "\(refused.standardOutput)\(refused.standardError)")
        #expect(refused.standardError.contains("not copied: \(original)"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: library.root + "/.cairn-store"))
        #expect(StoreImportTests.mediaFiles(in: library.root).count == before.count)

        // Mended, the move runs again: it sends what is missing, checks, switches and empties the folder.
        try good.write(to: URL(fileURLWithPath: path))
        let moved = try library.cairn(["store", "move", "--to", location], environment: environment)
        #expect(moved.status == 0, "\(moved.standardOutput)\(moved.standardError)")
        #expect(moved.standardOutput.contains("\(before.count) folder copies removed"), "\(moved.standardOutput)")
        #expect(StoreImportTests.mediaFiles(in: library.root).isEmpty, "\(StoreImportTests.mediaFiles(in: library.root))")
        #expect(try String(contentsOfFile: library.root + "/.cairn-store", encoding: .utf8).hasPrefix(location))
        let store = try S3Store(settings: try S3Settings.resolve(location, environment: environment))
        for file in before {
            #expect(try await store.size(of: try ObjectKey(file)) != nil, "\(file)")
        }
        #expect(try await store.read(try ObjectKey(original), range: nil) == Array(good))
        #expect(try await store.size(of: try ObjectKey("cairn-library-id")) != nil)

        // The library works from the store: check is clean, a new photo's files go there, the folder stays empty.
        let check = try library.cairn(["check"], environment: environment)
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
        #expect(check.standardOutput.contains("0 orphan(s), 0 missing, 0 of another size"), "\(check.standardOutput)")
        try library.folder.write(try DistinctJPEG.data(byteCount: 5_000, seed: 77), to: "src/e.jpg")
        let next = try library.cairn(["import", library.source, "--plain"], environment: environment)
        #expect(next.status == 0, "\(next.standardOutput)\(next.standardError)")
        #expect(StoreImportTests.mediaFiles(in: library.root).isEmpty)
        #expect(try await store.list(prefix: "originals/", after: nil, limit: 100).count == 4)
        let again = try library.cairn(["store", "move", "--to", location], environment: environment)
        #expect(again.status == 0, "\(again.standardOutput)\(again.standardError)")
        #expect(again.standardOutput.contains("Copied 0 file(s)"), "\(again.standardOutput)")
        let elsewhere = try library.cairn(["store", "move", "--to", try TestS3.freshLocation()], environment: environment)
        #expect(elsewhere.status == 1)
        #expect(elsewhere.standardError.contains("already"), "\(elsewhere.standardError)")
        for output in [refused, moved, check, next, again, elsewhere] {
            #expect(!(output.standardOutput + output.standardError).contains(environment["AWS_SECRET_ACCESS_KEY"]!))
        }
        await store.close()
    }

    /// The folder's trash moved files aside, where a store library's trash would not look: such a library is not
    /// moved (nothing sent, nothing recorded) until its trash is empty.
    @Test func aLibraryWhoseTrashHoldsAssetsMovesOnlyOnceItIsEmpty() async throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 3)
        let environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let library = folder.subpath("lib")
        func cairn(_ arguments: [String]) throws -> CairnBinary.Result {
            try CairnBinary.run(arguments + ["--library", library], environment: environment)
        }
        #expect(try cairn(["sync", folder.subpath("src"), "--plain", "--clips", "off"]).status == 0)
        try FileManager.default.removeItem(atPath: folder.subpath("src/IMG_0.jpg"))
        let trashed = try cairn(["sync", folder.subpath("src"), "--plain", "--apply-deletions", "--quarantine-days", "0"])
        #expect(trashed.status == 0, "\(trashed.standardOutput)\(trashed.standardError)")

        let refused = try cairn(["store", "move", "--to", location])
        #expect(refused.status == 1, "\(refused.standardOutput)\(refused.standardError)")
        #expect(refused.standardError.contains("trash holds 1 asset(s)"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: library + "/.cairn-store"))
        let store = try S3Store(settings: try S3Settings.resolve(location, environment: environment))
        #expect(try await store.list(prefix: "originals/", after: nil, limit: 10).isEmpty)

        let purged = try cairn(["trash", "purge", "--older-than", "0"])
        #expect(purged.status == 0, "\(purged.standardOutput)\(purged.standardError)")
        let moved = try cairn(["store", "move", "--to", location])
        #expect(moved.status == 0, "\(moved.standardOutput)\(moved.standardError)")
        #expect(try await store.list(prefix: "originals/", after: nil, limit: 10).count == 2)
        await store.close()
    }
}
