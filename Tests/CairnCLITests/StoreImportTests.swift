import CairnS3
import CairnStore
import CairnTesting
import Foundation
import Testing

/// `cairn import --store s3://…` as a real process against the suite's SeaweedFS: the library's files go to the
/// store and leave the folder, the library records its store, a later run finds its originals there, a kill
/// resumes, and a store the library does not record is refused before anything is read.
@Suite struct StoreImportTests {
    /// Files under the folders a store takes over, in the library folder, by their paths in it.
    static func mediaFiles(in library: String) -> [String] {
        ["originals", "derived", "sidecars"].flatMap { folder -> [String] in
            let root = library + "/" + folder
            return (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter { name in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory) && !isDirectory.boolValue
            }.map { folder + "/" + $0 }
        }
    }

    @Test func aLibraryOnAStoreKeepsItsFilesThereAndMakesDerivativesLaterFromIt() async throws {
        let (folder, files) = try SyncCommandTests.makeSource(count: 6)
        try folder.write(Data("<x:xmpmeta/>".utf8), to: "src/IMG_0.jpg.xmp")
        let environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let library = folder.subpath("lib")
        let archived = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--store", location,
                                            "--derivatives", "off", "--plain"], environment: environment)
        #expect(archived.status == 0, "\(archived.standardOutput)\(archived.standardError)")
        #expect(Self.mediaFiles(in: library).isEmpty, "\(Self.mediaFiles(in: library))")
        #expect(try String(contentsOfFile: library + "/.cairn-store", encoding: .utf8).hasPrefix(location))

        let store = try S3Store(settings: try S3Settings.resolve(location, environment: environment))
        let originals = try await store.list(prefix: "originals/", after: nil, limit: 100)
        #expect(originals.count == files.count)
        let sizes = Set(files.values.map { Int64($0.count) })
        #expect(originals.allSatisfy { sizes.contains($0.size) })
        #expect(try await store.list(prefix: "sidecars/", after: nil, limit: 10).count == 1)

        // The next run makes the derivatives from the store's originals (the folder has none), without --store:
        // the library says where its files are.
        let finished = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain"],
                                           environment: environment)
        #expect(finished.status == 0, "\(finished.standardOutput)\(finished.standardError)")
        #expect(finished.standardOutput.contains("6 ready"), "\(finished.standardOutput)")
        #expect(Self.mediaFiles(in: library).isEmpty, "\(Self.mediaFiles(in: library))")
        let thumbnails = try await store.list(prefix: "derived/", after: nil, limit: 100).filter { $0.key.text.hasSuffix("-thumb.webp") }
        #expect(thumbnails.count == files.count)

        let check = try CairnBinary.run(["check", "--library", library], environment: environment)
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
        #expect(check.standardOutput.contains("0 orphan(s), 0 missing, 0 of another size"), "\(check.standardOutput)")
        #expect(check.standardOutput.contains(location), "\(check.standardOutput)")
        #expect(!check.standardOutput.contains(environment["AWS_SECRET_ACCESS_KEY"]!))

        // The status page's thumbnails are read from the store.
        let server = try ServiceProcess(CairnBinary.path, ["serve", "--library", library, "--listen", "127.0.0.1:0"],
                                        environment: environment, logPath: folder.subpath("serve.log"))
        defer { server.stop() }
        let base = "http://127.0.0.1:" + (try server.waitForOutput(matching: "on http://127\\.0\\.0\\.1:([0-9]+)/"))
        let thumbnail = try #require(thumbnails.first)
        let sha1 = String(try #require(thumbnail.key.text.split(separator: "/").last).prefix(40))
        let fetched = folder.subpath("thumbnail.webp")
        try ExternalTool.run(["curl", "-s", "--fail", "-o", fetched, base + "/thumbnails/" + sha1])
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: fetched))) == (try await store.read(thumbnail.key, range: nil)))
        await store.close()
    }

    @Test func anImportKilledWhileStoringResumesAndLeavesNothingBehind() async throws {
        let (folder, files) = try SyncCommandTests.makeSource(count: 12)
        var environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let library = folder.subpath("lib")
        environment["CAIRN_TEST_ITEM_DELAY_MS"] = "300"
        let killed = try signalledOnceOutputShows(
            ["import", folder.subpath("src"), "--library", library, "--store", location, "--json",
             "--lanes", "transfer=1,metadata=1,thumbnail=1,synthesis=1"], signal: SIGKILL, environment: environment) {
                $0.contains("\"imported\"")
            }
        #expect(killed.sawLine, "no item was imported")
        environment["CAIRN_TEST_ITEM_DELAY_MS"] = nil
        let resumed = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--plain"],
                                          environment: environment)
        #expect(resumed.status == 0, "\(resumed.standardOutput)\(resumed.standardError)")
        #expect(Self.mediaFiles(in: library).isEmpty, "\(Self.mediaFiles(in: library))")
        let check = try CairnBinary.run(["check", "--library", library], environment: environment)
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
        #expect(check.standardOutput.contains("0 orphan(s), 0 missing, 0 of another size"), "\(check.standardOutput)")
        let store = try S3Store(settings: try S3Settings.resolve(location, environment: environment))
        #expect(try await store.list(prefix: "originals/", after: nil, limit: 100).count == files.count)
        #expect(try await store.list(prefix: "derived/", after: nil, limit: 100).filter { $0.key.text.hasSuffix("-thumb.webp") }
                    .count == files.count)
        await store.close()
    }

    /// The trash of a library on a store is a state in its catalog: a sync's deletions leave every object where it
    /// is (`cairn check` counts them as the trash's), a restore brings the assets back with their thumbnails and
    /// sidecar, and a purge deletes the objects of what is still trashed, and only those.
    @Test func aStoreLibrarysTrashIsAStateUntilAPurgeDeletesItsObjects() async throws {
        let (folder, files) = try SyncCommandTests.makeSource(count: 5)
        try folder.write(Data("<x:xmpmeta/>".utf8), to: "src/IMG_0.jpg.xmp")
        let environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let library = folder.subpath("lib")
        func sync(_ extra: [String] = []) throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", folder.subpath("src"), "--library", library, "--plain", "--clips", "off"] + extra,
                                environment: environment)
        }
        let imported = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--store", location,
                                            "--clips", "off", "--plain"], environment: environment)
        #expect(imported.status == 0, "\(imported.standardOutput)\(imported.standardError)")
        let store = try S3Store(settings: try S3Settings.resolve(location, environment: environment))
        func keys() async throws -> Set<String> {
            var all: Set<String> = []
            for prefix in ["originals/", "derived/", "sidecars/"] {
                all.formUnion(try await store.list(prefix: prefix, after: nil, limit: 1000).map(\.key.text))
            }
            return all
        }
        let everything = try await keys()
        // Five originals, their thumbnails and previews, one sidecar.
        let expected: Int = 16
        #expect(everything.count == expected, "\(everything.sorted())")

        // A sync's first sight of a source never trashes.
        let seen = try sync()
        #expect(seen.status == 0, "\(seen.standardOutput)\(seen.standardError)")
        for name in ["src/IMG_0.jpg", "src/IMG_0.jpg.xmp", "src/IMG_1.jpg"] {
            try FileManager.default.removeItem(atPath: folder.subpath(name))
        }
        let trashed = try sync(["--apply-deletions", "--quarantine-days", "0"])
        #expect(trashed.status == 0, "\(trashed.standardOutput)\(trashed.standardError)")
        #expect(trashed.standardOutput.contains("until `cairn trash purge`"), "\(trashed.standardOutput)")
        let runID = try #require(trashed.standardOutput.split(separator: "\n")
            .first { $0.contains("run ") && $0.contains("started") }
            .flatMap { $0.split(separator: " ").last.map { String($0.dropLast()) } })
        #expect(try await keys() == everything, "nothing leaves the store when trashed")
        let listed = try CairnBinary.run(["ls", "--library", library, "--json"], environment: environment)
        #expect(listed.standardOutput.split(separator: "\n").count == 3, "\(listed.standardOutput)")
        let checked = try CairnBinary.run(["check", "--library", library], environment: environment)
        let checkedOutput = checked.standardOutput
        #expect(checked.status == 0, "\(checkedOutput)\(checked.standardError)")
        #expect(checkedOutput.contains("0 orphan(s), 0 missing"), "\(checkedOutput)")
        #expect(checkedOutput.contains("7 in the trash until purged"), "\(checkedOutput)")

        let restored = try CairnBinary.run(["restore", "--run-id", runID, "--library", library], environment: environment)
        #expect(restored.status == 0, "\(restored.standardOutput)\(restored.standardError)")
        #expect(restored.standardOutput.contains("Restored 2 asset(s), 7 file(s)"), "\(restored.standardOutput)")
        let back = try CairnBinary.run(["ls", "--library", library, "--json"], environment: environment)
        #expect(back.standardOutput.split(separator: "\n").count == 5, "\(back.standardOutput)")

        // The restored ones are kept from now on (a restore excludes them); another file goes, for good this time.
        try FileManager.default.removeItem(atPath: folder.subpath("src/IMG_2.jpg"))
        let second = try sync(["--apply-deletions", "--quarantine-days", "0"])
        #expect(second.status == 0, "\(second.standardOutput)\(second.standardError)")
        let purged = try CairnBinary.run(["trash", "purge", "--older-than", "0", "--library", library], environment: environment)
        #expect(purged.status == 0, "\(purged.standardOutput)\(purged.standardError)")
        #expect(purged.standardOutput.contains("3 file(s)"), "\(purged.standardOutput)")
        let hex = String(String(decoding: try ExternalTool.run(["sha1sum", "-"], in: nil, input: files["src/IMG_2.jpg"]!),
                                as: UTF8.self).prefix(40))
        let left = try await keys()
        #expect(left.count == everything.count - 3, "\(left.sorted())")
        #expect(left.allSatisfy { !$0.contains(hex) }, "\(left.sorted())")
        let final = try CairnBinary.run(["check", "--library", library], environment: environment)
        #expect(final.status == 0 && final.standardOutput.contains("0 orphan(s), 0 missing, 0 of another size."),
                "\(final.standardOutput)\(final.standardError)")
        await store.close()
    }

    @Test func aStoreTheLibraryDoesNotRecordIsRefusedBeforeAnythingIsRead() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 2)
        let environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let library = folder.subpath("lib")
        // A library whose files are in its folder does not move onto a store by a flag.
        let inFolder = try CairnBinary.run(["import", folder.subpath("src"), "--library", library], environment: environment)
        #expect(inFolder.status == 0, "\(inFolder.standardError)")
        let moved = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--store", location],
                                        environment: environment)
        #expect(moved.status == 64)
        #expect(moved.standardError.contains("cairn store move --to"), "\(moved.standardError)")

        let onStore = folder.subpath("lib2")
        let first = try CairnBinary.run(["import", folder.subpath("src"), "--library", onStore, "--store", location],
                                        environment: environment)
        #expect(first.status == 0, "\(first.standardError)")
        let elsewhere = try CairnBinary.run(["import", folder.subpath("src"), "--library", onStore, "--store",
                                             location + "-other"], environment: environment)
        #expect(elsewhere.status == 64)
        #expect(elsewhere.standardError.contains(".cairn-store"), "\(elsewhere.standardError)")
        // A second library with a catalog of its own never shares a store with the first: its purges and repairs
        // would delete files the first's catalog names.
        let second = folder.subpath("lib3")
        let shared = try CairnBinary.run(["import", folder.subpath("src"), "--library", second, "--store", location],
                                         environment: environment)
        #expect(shared.status == 1, "\(shared.standardOutput)\(shared.standardError)")
        #expect(shared.standardError.contains("holds the files of library"), "\(shared.standardError)")
        #expect(!FileManager.default.fileExists(atPath: second + "/.cairn-store"))
        // An unreachable store stops the run with its reason, before any file is read.
        var wrong = environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "wrong-\(UUID().uuidString)"
        let refused = try CairnBinary.run(["import", folder.subpath("src"), "--library", onStore], environment: wrong)
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("cannot be used"), "\(refused.standardError)")
        #expect(!refused.standardError.contains(wrong["AWS_SECRET_ACCESS_KEY"]!))
    }
}
