import CairnCore
import CairnS3
import CairnStore
import CairnTesting
import Foundation
import Glibc
import Testing

/// `cairn import --queue --store` with a `cairn worker --store` that has no library folder, as real processes over the
/// suite's PostgreSQL and SeaweedFS: the worker finds the library by the identity in the store, reads originals from
/// it, puts what it makes there, and leaves nothing behind.
@Suite struct StoreWorkerTests {
    @Test func aWorkerWithoutTheLibraryFolderMakesEveryDerivativeFromTheStore() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-store-worker")
        let source = try SharedQueueTests.source(in: folder, stills: 3, width: 1400, height: 1000, video: true)
        let (url, _) = try QueueDatabase.fresh()
        let environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let plain = folder.path + "/plain", library = folder.path + "/lib"
        let reference = try CairnBinary.run(["import", source, "--library", plain, "--plain"])
        #expect(reference.status == 0, "\(reference.standardError)")

        // Before an import has shared the store's library, a worker finds none there and says so.
        let early = try CairnBinary.run(["worker", "--queue", url, "--store", location], environment: environment)
        #expect(early.status == 1 && early.standardError.contains("no shared library there"), "\(early.standardError)")

        let importing = try ServiceProcess(CairnBinary.path, ["import", source, "--library", library, "--store", location,
                                                              "--queue", url, "--work-lanes", "0", "--plain"],
                                           environment: environment, logPath: folder.path + "/import.log")
        _ = try await BlockingPool.run {
            try importing.waitForOutput(matching: "warning: no `cairn worker` has beaten on this queue", timeout: 120)
        }
        let worker = try ServiceProcess(CairnBinary.path, ["worker", "--queue", url, "--store", location, "--lanes", "2"],
                                        environment: environment, logPath: folder.path + "/worker.log")
        let scratch = try await BlockingPool.run { try worker.waitForOutput(matching: "\\(scratch ([^)]+)\\)", timeout: 60) }
        try await BlockingPool.run { importing.process.waitUntilExit() }
        #expect(importing.process.terminationStatus == 0, "\(importing.output)")
        kill(worker.pid, SIGTERM)
        try await BlockingPool.run { worker.process.waitUntilExit() }
        #expect(worker.process.terminationStatus == 0, "\(worker.output)")
        // Three thumbnails with previews, three clips, the video's thumbnail: seven jobs, all by this worker.
        #expect(worker.output.contains("stopped: 7 done, 0 failed"), "\(worker.output)")
        #expect(!FileManager.default.fileExists(atPath: scratch), "the worker's scratch folder \(scratch) is gone")
        #expect(!worker.output.contains(environment["AWS_SECRET_ACCESS_KEY"]!))

        // The catalog records what a plain import's does, and every file it names is in the store, none in the folder.
        let made = try await SharedQueueTests.derived(library)
        let expected = try await SharedQueueTests.derived(plain)
        #expect(!made.isEmpty && made == expected, "\(made)")
        #expect(StoreImportTests.mediaFiles(in: library).isEmpty, "\(StoreImportTests.mediaFiles(in: library))")
        let store = try S3Store(settings: try S3Settings.resolve(location, environment: environment))
        for line in made {
            let path = String(line.split(separator: " ")[1])
            #expect(try await store.size(of: try ObjectKey(path)) != nil, "\(path) is in the store")
        }
        let identity = try String(contentsOfFile: library + "/.cairn-library-id", encoding: .utf8)
        #expect(String(decoding: try await store.read(try ObjectKey("cairn-library-id"), range: nil), as: UTF8.self) == identity)
        await store.close()
        let check = try CairnBinary.run(["check", "--library", library], environment: environment)
        #expect(check.status == 0 && check.standardOutput.contains("0 orphan(s), 0 missing, 0 of another size"),
                "\(check.standardOutput)\(check.standardError)")

        // A library folder that names another library does not take this store's work.
        let other = folder.path + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try Data("\(UUID().uuidString.lowercased())\n".utf8).write(to: URL(fileURLWithPath: other + "/.cairn-library-id"))
        let mixed = try CairnBinary.run(["import", source, "--library", other, "--store", location, "--queue", url],
                                        environment: environment)
        #expect(mixed.status == 1 && mixed.standardError.contains("holds the files of library"), "\(mixed.standardError)")
    }

    /// Two workers that name one folder (not a library) each work in a scratch folder of their own inside it, and
    /// one a killed worker left there is removed by the next to start.
    @Test func workersThatNameOneFolderEachGetTheirOwnScratchInIt() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-store-scratch")
        let (url, _) = try QueueDatabase.fresh()
        let environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let store = try S3Store(settings: try S3Settings.resolve(location, environment: environment))
        _ = try await store.put(try ObjectKey("cairn-library-id"), bytes: Array("\(UUID().uuidString.lowercased())\n".utf8))
        await store.close()
        let shared = folder.path + "/scratch"
        let left = shared + "/cairn-worker-killed"
        try FileManager.default.createDirectory(atPath: left, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: left + "/.lock"))
        var workers: [ServiceProcess] = []
        var scratches: [String] = []
        for index in 0..<2 {
            let worker = try ServiceProcess(CairnBinary.path, ["worker", "--queue", url, "--store", location,
                                                               "--library", shared, "--lanes", "1"],
                                            environment: environment, logPath: folder.path + "/worker\(index).log")
            workers.append(worker)
            scratches.append(try await BlockingPool.run { try worker.waitForOutput(matching: "\\(scratch ([^)]+)\\)", timeout: 60) })
        }
        #expect(scratches[0] != scratches[1], "\(scratches)")
        #expect(scratches.allSatisfy { $0.hasPrefix(shared + "/cairn-worker-") && FileManager.default.fileExists(atPath: $0) })
        #expect(!FileManager.default.fileExists(atPath: left), "the killed worker's scratch folder is still there")
        for worker in workers {
            kill(worker.pid, SIGTERM)
            try await BlockingPool.run { worker.process.waitUntilExit() }
            #expect(worker.process.terminationStatus == 0, "\(worker.output)")
        }
        #expect(scratches.allSatisfy { !FileManager.default.fileExists(atPath: $0) }, "\(scratches)")
    }
}
