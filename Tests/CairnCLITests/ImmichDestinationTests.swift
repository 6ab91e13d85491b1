import CairnTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Issue 26: an Immich server as the destination of `cairn sync`, against `immich-double` (a server generated from
/// Immich's spec) as a real process over loopback. Every double logs its traffic; `scripts/test` validates the
/// suite's traffic against Immich's unfiltered spec afterwards.
@Suite struct ImmichDestinationTests {
    /// A key no other byte of the suite contains, so a grep for it finds only a leak.
    static let key = "cairn-immich-key-" + UUID().uuidString

    struct Fixture {
        let folder: TemporaryDirectory
        let double: ImmichDouble
        var source: String { folder.subpath("src") }
        var library: String { folder.subpath("lib") }

        init(serverVersion: String = "3.0.3", faults: ImmichDouble.Faults? = nil,
             keyPermissions: [String: [String]] = [:]) throws {
            folder = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
            double = try ImmichDouble(users: [ImmichDestinationTests.key: "tester", "other-key": "other"],
                                      traffic: ImmichDestinationTests.trafficLog(), faults: faults,
                                      serverVersion: serverVersion, keyPermissions: keyPermissions)
        }

        func cairn(_ arguments: [String], key: String = ImmichDestinationTests.key,
                   environment: [String: String] = [:]) throws -> CairnBinary.Result {
            try CairnBinary.run(arguments + ["--library", library, "--destination", "immich", "--immich-url", double.baseURL],
                                environment: environment.merging(["CAIRN_IMMICH_API_KEY": key]) { $1 })
        }

        func sync(_ extra: [String] = []) throws -> CairnBinary.Result {
            try cairn(["sync", source, "--plain"] + extra)
        }

        func sha1(_ name: String) throws -> String {
            String(String(decoding: try ExternalTool.run(["sha1sum", folder.subpath("src/" + name)]), as: UTF8.self).prefix(40))
        }

        /// `count` distinct small JPEGs named PREFIX0.JPG, PREFIX1.JPG, ...
        func writeDistinctJPEGs(_ count: Int, prefix: String) throws {
            for index in 0..<count {
                try DistinctJPEG.data(byteCount: 3_000 + index, seed: UInt8(index))
                    .write(to: URL(fileURLWithPath: folder.subpath("src/\(prefix)\(index).JPG")))
            }
        }

        /// `cairn sync` to the double as a process of its own, running while the test acts on it.
        func startSync(output: FileHandle) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CairnBinary.path)
            process.arguments = ["sync", source, "--library", library, "--plain", "--destination", "immich",
                                 "--immich-url", double.baseURL]
            process.environment = ProcessInfo.processInfo.environment
                .merging(["CAIRN_IMMICH_API_KEY": ImmichDestinationTests.key]) { $1 }
            process.standardOutput = output
            process.standardError = output
            try process.run()
            return process
        }

        /// Waits (10 s at most) until the double kept `count` uploads. Counted on disk, from this thread: under a busy
        /// suite the cooperative pool may be slow to run a request's continuation, and the moment would pass.
        func waitForUploads(_ count: Int) {
            for _ in 0..<400 {
                let kept = (FileManager.default.subpaths(atPath: double.dataDirectory + "/files") ?? [])
                    .filter { $0.split(separator: "/").count == 2 }.count
                if kept >= count { return }
                usleep(25_000)
            }
        }

        /// Three photos (one with an XMP sidecar), a video, a Live Photo pair and a JPEG cairn cannot probe.
        func writeMedia() throws {
            try MediaFixtures.livePhoto(in: folder.subpath("src"), stem: "IMG_0001")
            for index in 2..<5 {
                try MediaFixtures.jpeg(at: folder.subpath("src/PHOTO_\(index).JPG"), width: 64 + index, height: 48)
            }
            try #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF/></x:xmpmeta>"#
                .write(toFile: folder.subpath("src/PHOTO_2.JPG.xmp"), atomically: true, encoding: .utf8)
            try MediaFixtures.video(at: folder.subpath("src/CLIP.MP4"), seconds: 2, creationTime: "2023-07-14T11:00:00.000000Z")
            try MediaFixtures.truncatedJPEG(at: folder.subpath("src/BROKEN.JPG"))
        }
    }

    /// A file for the double's traffic: in `$CAIRN_IMMICH_TRAFFIC_DIR` when the suite is run by scripts/test.
    static func trafficLog() -> String {
        let directory = ProcessInfo.processInfo.environment["CAIRN_IMMICH_TRAFFIC_DIR"] ?? NSTemporaryDirectory()
        return directory + "/immich-traffic-\(UUID().uuidString).ndjson"
    }

    @Test func aFirstSyncCreatesEachAssetOnceASecondUploadsNothing() async throws {
        let fixture = try Fixture()
        try fixture.writeMedia()
        let first = try fixture.sync()
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        let state = try await fixture.double.state()
        let names = ["IMG_0001.JPG", "IMG_0001.MOV", "PHOTO_2.JPG", "PHOTO_3.JPG", "PHOTO_4.JPG", "CLIP.MP4", "BROKEN.JPG"]
        #expect(state.assets.count == names.count)
        for name in names {
            let sha1 = try fixture.sha1(name)
            #expect(state.creations[sha1] == 1, "\(name) created \(state.creations[sha1] ?? 0) times")
            #expect(state.assets(withChecksum: sha1).first?.originalFileName == name)
        }
        // The Live Photo: the still names its movie, which is hidden from the timeline.
        let still = try #require(state.assets(withChecksum: try fixture.sha1("IMG_0001.JPG")).first)
        let movie = try #require(state.assets(withChecksum: try fixture.sha1("IMG_0001.MOV")).first)
        #expect(still.livePhotoVideoId == movie.id)
        #expect(movie.visibility == "hidden")
        // The sidecar went with its photo; the video's length is whole milliseconds; the capture time has its offset.
        #expect(try #require(state.assets(withChecksum: try fixture.sha1("PHOTO_2.JPG")).first).sidecarBytes > 0)
        let clip = try #require(state.assets(withChecksum: try fixture.sha1("CLIP.MP4")).first)
        #expect(abs((clip.duration ?? 0) - 2000) <= 100)
        #expect(movie.fileCreatedAt.hasPrefix("2023-07-14T"))

        // Nothing changed at the source: no upload, no bulk check; ping, version, user, key, media types and one
        // search of Immich's trash since the last check.
        let before = state.requests
        let second = try fixture.sync()
        #expect(second.status == 0, "\(second.standardOutput)\(second.standardError)")
        let after = try await fixture.double.state()
        #expect(after.requests - before <= 6, "\(after.requests - before) requests for a sync with nothing new")
        #expect(after.creations == state.creations)
        #expect(after.forceDeletes == 0)
        // `cairn status` shows the destination's last run beside the library's (here the library has none).
        let status = try CairnBinary.run(["status", "--library", fixture.library])
        #expect(status.status == 0 && status.standardOutput.contains("Immich destination"), "\(status.standardError)")
        #expect(status.standardOutput.contains("Up to date"))
        try Self.expectNoKey(in: fixture, outputs: [first, second, status])
    }

    @Test func contentInImmichsTrashIsRestoredNotCalledADuplicate() async throws {
        let fixture = try Fixture()
        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/KEPT.JPG"), width: 80, height: 60)
        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/NEW.JPG"), width: 90, height: 60)
        // Another tool uploaded KEPT.JPG once, and someone trashed it in Immich since.
        let keptID = try await fixture.double.upload(path: fixture.folder.subpath("src/KEPT.JPG"), key: Self.key)
        try await fixture.double.trash([keptID], key: Self.key)
        let result = try fixture.sync()
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("restored 1 file from Immich's trash"))
        // Reported as restored, never as a duplicate.
        #expect(result.standardOutput.contains("restored     1 from Immich's trash"))
        #expect(result.standardOutput.contains("duplicates   0"))
        let state = try await fixture.double.state()
        let kept = try #require(state.assets(withChecksum: try fixture.sha1("KEPT.JPG")).first)
        #expect(!kept.isTrashed && kept.id == keptID)
        #expect(state.creations[try fixture.sha1("KEPT.JPG")] == 1)
        #expect(state.creations[try fixture.sha1("NEW.JPG")] == 1)
    }

    @Test func aDeletionGoesToImmichsTrashWithTheRunTagAndRestoreBringsBothPartsBack() async throws {
        let fixture = try Fixture()
        try fixture.writeMedia()
        #expect(try fixture.sync().status == 0)
        for name in ["IMG_0001.JPG", "IMG_0001.MOV"] {
            try FileManager.default.removeItem(atPath: fixture.folder.subpath("src/\(name)"))
        }
        _ = try fixture.sync(["--apply-deletions"])
        let trashed = try fixture.sync(["--apply-deletions", "--quarantine-days", "0"])
        #expect(trashed.status == 0, "\(trashed.standardOutput)\(trashed.standardError)")
        #expect(trashed.standardOutput.contains("moved 2 assets to Immich's trash"))
        let runID = try #require(trashed.standardOutput.split(separator: "\n")
            .first { $0.contains("run ") && $0.contains("started") }
            .flatMap { $0.split(separator: " ").last.map { String($0.dropLast()) } })
        let state = try await fixture.double.state()
        let parts = state.assets.filter { $0.originalFileName.hasPrefix("IMG_0001") }
        #expect(parts.count == 2 && parts.allSatisfy { $0.isTrashed && $0.tags.contains("cairn/v1/run/\(runID)") })
        #expect(state.assets.filter(\.isTrashed).count == 2)
        #expect(state.forceDeletes == 0)

        let restore = try fixture.cairn(["restore", "--run-id", runID])
        #expect(restore.status == 0, "\(restore.standardOutput)\(restore.standardError)")
        let back = try await fixture.double.state()
        #expect(back.assets.allSatisfy { !$0.isTrashed })
        // Restored assets are kept from now on: the next sync does not trash them again.
        let next = try fixture.sync(["--apply-deletions", "--quarantine-days", "0"])
        #expect(next.status == 0)
        #expect(try await fixture.double.state().assets.allSatisfy { !$0.isTrashed })
    }

    @Test func aServerBelowVersion3IsRefusedByName() throws {
        let fixture = try Fixture(serverVersion: "2.9.1")
        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/A.JPG"), width: 64, height: 48)
        let result = try fixture.sync()
        #expect(result.status == 1)
        #expect(result.standardError.contains("Immich 2.9.1") && result.standardError.contains("3.0.0"))
    }

    @Test func aRefusedKeyStopsWithItsOwnExitCodeAndNeverPrintsTheKey() throws {
        let fixture = try Fixture()
        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/A.JPG"), width: 64, height: 48)
        let wrong = "wrong-key-" + UUID().uuidString
        let result = try fixture.sync(key: wrong)
        #expect(result.status == 77, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardError.contains("Invalid API key"))
        #expect(!(result.standardOutput + result.standardError).contains(wrong))
    }

    /// 5 % 500s, 3 % 429s with `Retry-After`, 1 % resets in the middle of a body, 2 % resets after the server
    /// carried out the request (an upload whose outcome is unknown), and a proxy limit one file is over.
    @Test func underFaultsEveryFileArrivesExactlyOnceAndTheOversizedOneIsReportedWithItsReason() async throws {
        let fixture = try Fixture(faults: ImmichDouble.Faults(
            seed: 7, status500: 0.05, status429: 0.03, retryAfterSeconds: 1, resetBeforeResponse: 0.02,
            resetMidBody: 0.01, maxBodyBytes: 200_000))
        for index in 0..<40 {
            try DistinctJPEG.data(byteCount: 4_000 + index, seed: UInt8(index))
                .write(to: URL(fileURLWithPath: fixture.folder.subpath("src/P\(index).JPG")))
        }
        try DistinctJPEG.data(byteCount: 300_000, seed: 200).write(to: URL(fileURLWithPath: fixture.folder.subpath("src/BIG.JPG")))
        let result = try fixture.sync()
        #expect(result.status == 3, "\(result.standardOutput)\(result.standardError)")
        let output = result.standardOutput + result.standardError
        #expect(output.contains("BIG.JPG") && output.contains("request-size limit"))
        let state = try await fixture.double.state()
        for index in 0..<40 {
            let sha1 = try fixture.sha1("P\(index).JPG")
            #expect(state.creations[sha1] == 1, "P\(index).JPG created \(state.creations[sha1] ?? 0) times")
        }
        #expect(state.creations[try fixture.sha1("BIG.JPG")] == nil)
        #expect(state.assets.count == 40)
        try Self.expectNoKey(in: fixture, outputs: [result])
    }

    /// `kill -9` while uploads are in flight (each stalled on the server), then a rerun: nothing missing, nothing
    /// uploaded twice (an upload the server finished after the kill is found by its checksum).
    @Test func killedInTheMiddleOfUploadsThenRerunMissesAndDoublesNothing() async throws {
        let fixture = try Fixture(faults: ImmichDouble.Faults(seed: 3, stallSeconds: 0.4, stallRate: 1))
        try fixture.writeDistinctJPEGs(24, prefix: "K")
        let process = try fixture.startSync(output: FileHandle.nullDevice)
        // Wait until some uploads exist (the stall makes each take 0.4 s), then kill without warning.
        fixture.waitForUploads(4)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let partial = try await fixture.double.state().assets.count
        #expect(partial >= 4 && partial < 24, "\(partial) of 24 uploaded before the kill")
        try await fixture.double.setFaults(ImmichDouble.Faults())
        let rerun = try fixture.sync()
        #expect(rerun.status == 0, "\(rerun.standardOutput)\(rerun.standardError)")
        let state = try await fixture.double.state()
        #expect(state.assets.count == 24)
        #expect(state.creations.values.allSatisfy { $0 == 1 }, "\(state.creations)")
    }

    /// The key appears in no output, run log, catalog, journal or state file.
    static func expectNoKey(in fixture: Fixture, outputs: [CairnBinary.Result]) throws {
        for output in outputs {
            #expect(!output.standardOutput.contains(key) && !output.standardError.contains(key))
        }
        let found = try ExternalTool.run(["sh", "-c", "grep -rl -- \"$0\" \"$1\" || true", key, fixture.library])
        #expect(found.isEmpty, "the API key was written to \(String(decoding: found, as: UTF8.self))")
    }
}

extension ImmichDestinationTests.Fixture {
    func sync(key: String) throws -> CairnBinary.Result { try cairn(["sync", source, "--plain"], key: key) }
}

/// What another Immich client (or a person in Immich's web page) does, straight over HTTP.
extension ImmichDouble {
    /// Uploads a file as another tool would; returns the asset's id.
    func upload(path: String, key: String) async throws -> String {
        let boundary = "cairn-test-\(UUID().uuidString)"
        var body = Data()
        func field(_ name: String, _ value: String) {
            body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        field("fileCreatedAt", "2024-01-01T00:00:00.000Z")
        field("fileModifiedAt", "2024-01-01T00:00:00.000Z")
        let name = URL(fileURLWithPath: path).lastPathComponent
        body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"assetData\"; filename=\"\(name)\"\r\n".utf8)
        body += Data("Content-Type: application/octet-stream\r\n\r\n".utf8)
        body += try Data(contentsOf: URL(fileURLWithPath: path))
        body += Data("\r\n--\(boundary)--\r\n".utf8)
        let answer = try await send("POST", "/api/assets", key: key, body: body,
                                    contentType: "multipart/form-data; boundary=\(boundary)")
        let object = try JSONSerialization.jsonObject(with: answer) as? [String: Any]
        guard let id = object?["id"] as? String else { throw ImmichRequestFailure(description: "upload: no id in the answer") }
        return id
    }

    /// Moves assets to Immich's trash, as a person does in the web page.
    func trash(_ ids: [String], key: String) async throws {
        let body = try JSONSerialization.data(withJSONObject: ["ids": ids, "force": false])
        _ = try await send("DELETE", "/api/assets", key: key, body: body, contentType: "application/json")
    }

    private func send(_ method: String, _ path: String, key: String, body: Data, contentType: String) async throws -> Data {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        request.httpBody = body
        request.setValue(contentType, forHTTPHeaderField: "content-type")
        request.setValue(key, forHTTPHeaderField: "x-api-key")
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
            throw ImmichRequestFailure(description: "\(method) \(path): \(String(decoding: data, as: UTF8.self))")
        }
        return data
    }
}

struct ImmichRequestFailure: Error, CustomStringConvertible {
    let description: String
}

extension ImmichDestinationTests {
    /// cairn's state is per server and account: a second account starts from nothing and gets its own copy.
    @Test func aSecondAccountOnTheSameServerNeverSeesTheFirstOnesState() async throws {
        let fixture = try Fixture()
        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/A.JPG"), width: 64, height: 48)
        #expect(try fixture.sync().status == 0)
        let other = try fixture.sync(key: "other-key")
        #expect(other.status == 0, "\(other.standardOutput)\(other.standardError)")
        let state = try await fixture.double.state()
        #expect(Set(state.assets.map(\.owner)) == ["tester", "other"])
        let partitions = try FileManager.default.contentsOfDirectory(
            atPath: try #require(FileManager.default.subpaths(atPath: fixture.library + "/immich")?.first
                .map { fixture.library + "/immich/" + $0 }))
        #expect(partitions.count == 2, "\(partitions)")
        // A state folder keeps cairn's records, never a library's media folders (the media live on the server).
        let serverFolder = try #require(FileManager.default.subpaths(atPath: fixture.library + "/immich")?.first)
        for partition in partitions {
            let entries = try FileManager.default.contentsOfDirectory(
                atPath: fixture.library + "/immich/" + serverFolder + "/" + partition)
            #expect(entries.contains("catalog.sqlite") && !entries.contains("originals")
                    && !entries.contains("derived") && !entries.contains("tmp"), "\(entries)")
        }
        // Purging never reaches Immich's trash.
        let purge = try fixture.cairn(["trash", "purge", "--older-than", "0"])
        #expect(purge.status == 0 && purge.standardOutput.contains("never purges Immich's trash"))
        // Albums belong to imports: a command that brings nothing in refuses them rather than ignoring them.
        let misused = try fixture.cairn(["trash", "purge", "--older-than", "0", "--album", "X"])
        #expect(misused.status == 64 && misused.standardError.contains("apply to import and sync"))
    }
}

extension ImmichDestinationTests {
    /// `--album-from takeout`: a Takeout album folder's title from its metadata file (its name localized), one
    /// request per album; `--album NAME` puts a whole run in one album.
    @Test func takeoutAlbumsAndDatesReachImmich() async throws {
        let fixture = try Fixture()
        let paris = fixture.folder.subpath("src/Takeout/Google Photos/Paris")
        let lyon = fixture.folder.subpath("src/Takeout/Google Photos/Lyon")
        for folder in [paris, lyon] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        try #"{"title": "Paris 2019", "description": ""}"#.write(toFile: paris + "/metadata.json", atomically: true, encoding: .utf8)
        try #"{"title": "Lyon, été"}"#.write(toFile: lyon + "/métadonnées.json", atomically: true, encoding: .utf8)
        for index in 0..<3 { try MediaFixtures.jpeg(at: paris + "/P\(index).jpg", width: 60 + index, height: 40) }
        try MediaFixtures.jpeg(at: lyon + "/L0.jpg", width: 70, height: 40)
        try #"{"title": "L0.jpg", "photoTakenTime": {"timestamp": "1562932800"}, "geoData": {"latitude": 45.76, "longitude": 4.83}}"#
            .write(toFile: lyon + "/L0.jpg.json", atomically: true, encoding: .utf8)
        // In Lyon's zone (a Takeout date is an instant: with no EXIF offset, the machine's zone gives its wall time).
        let result = try fixture.cairn(["sync", fixture.source, "--plain", "--album-from", "takeout"],
                                       environment: ["TZ": "Europe/Paris"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let state = try await fixture.double.state()
        #expect(state.assets.filter { $0.albums == ["Paris 2019"] }.count == 3)
        #expect(state.assets.filter { $0.albums == ["Lyon, été"] }.count == 1)
        // The Takeout JSON's date and place, which the upload could not carry, reached the asset.
        let lyonPhoto = try #require(state.assets.first { $0.originalFileName == "L0.jpg" })
        #expect(lyonPhoto.dateTimeOriginal?.hasPrefix("2019-07-12T12:00:00") == true, "\(lyonPhoto)")
        #expect(lyonPhoto.timeZone == "UTC+2", "sent with the offset of its wall time, not as UTC: \(lyonPhoto)")
        #expect(lyonPhoto.latitude == 45.76 && lyonPhoto.longitude == 4.83)

        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/NEW.jpg"), width: 90, height: 40)
        let named = try fixture.cairn(["sync", fixture.source, "--plain", "--album", "Phone"])
        #expect(named.status == 0, "\(named.standardOutput)\(named.standardError)")
        #expect(try await fixture.double.state().assets.filter { $0.albums.contains("Phone") }.map(\.originalFileName) == ["NEW.jpg"])

        // `--album-from folder`: the album is the file's folder, by name.
        try FileManager.default.createDirectory(atPath: fixture.folder.subpath("src/Holidays"), withIntermediateDirectories: true)
        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/Holidays/H.jpg"), width: 91, height: 40)
        let byFolder = try fixture.cairn(["sync", fixture.source, "--plain", "--album-from", "folder"])
        #expect(byFolder.status == 0, "\(byFolder.standardOutput)\(byFolder.standardError)")
        #expect(try await fixture.double.state().assets.filter { $0.albums == ["Holidays"] }.map(\.originalFileName) == ["H.jpg"])
    }

    /// `--time-zone` (or `time_zone`) names the zone of Takeout dates that carry no offset, whatever the machine's.
    @Test func aTakeoutDateTakesTheZoneNamedByTimeZone() async throws {
        let fixture = try Fixture()
        let trip = fixture.folder.subpath("src/Takeout/Google Photos/Trip")
        try FileManager.default.createDirectory(atPath: trip, withIntermediateDirectories: true)
        try MediaFixtures.jpeg(at: trip + "/N0.jpg", width: 70, height: 40)
        try #"{"title": "N0.jpg", "photoTakenTime": {"timestamp": "1562932800"}}"#
            .write(toFile: trip + "/N0.jpg.json", atomically: true, encoding: .utf8)
        let result = try fixture.cairn(["sync", fixture.source, "--plain", "--time-zone", "America/New_York"],
                                       environment: ["TZ": "Europe/Paris"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let photo = try #require(try await fixture.double.state().assets.first { $0.originalFileName == "N0.jpg" })
        #expect(photo.dateTimeOriginal?.hasPrefix("2019-07-12T12:00:00") == true, "the same instant: \(photo)")
        #expect(photo.timeZone == "UTC-4", "\(photo)")
    }
}

extension ImmichDestinationTests {
    /// The key revoked in Immich while uploads are in flight: the run stops as "needs auth" (exit 77, `cairn status`
    /// says credentials are needed), nothing is lost, and with the key back the next run finishes the rest, each
    /// file created once.
    @Test func aKeyRevokedMidRunStopsAsNeedsAuthAndTheNextRunFinishes() async throws {
        let fixture = try Fixture(faults: ImmichDouble.Faults(seed: 5, stallSeconds: 0.5, stallRate: 1))
        try fixture.writeDistinctJPEGs(40, prefix: "R")
        let output = Pipe()
        let process = try fixture.startSync(output: output.fileHandleForWriting)
        fixture.waitForUploads(3)
        // From this thread, not the cooperative pool: under a busy suite an async request could come too late.
        Self.blockingPost(fixture.double.baseURL + "/_double/keys/revoke", body: Data(Self.key.utf8))
        try output.fileHandleForWriting.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 77, "\(printed)")
        #expect(!printed.contains(Self.key))
        let partial = try await fixture.double.state().assets.count
        #expect(partial >= 3 && partial < 40, "\(partial) of 40 uploaded before the key was revoked")
        let status = try CairnBinary.run(["status", "--library", fixture.library])
        #expect(status.standardOutput.contains("credentials needed"), "\(status.standardOutput)")

        try await fixture.double.setKey(Self.key, revoked: false)
        try await fixture.double.setFaults(ImmichDouble.Faults())
        let rerun = try fixture.sync()
        #expect(rerun.status == 0, "\(rerun.standardOutput)\(rerun.standardError)")
        let state = try await fixture.double.state()
        #expect(state.assets.count == 40)
        #expect(state.creations.values.allSatisfy { $0 == 1 }, "\(state.creations)")
    }

    static func blockingPost(_ url: String, body: Data) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.httpBody = body
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { _, _, _ in done.signal() }.resume()
        done.wait()
    }
}

extension ImmichDestinationTests {
    /// `cairn config` shows where the key comes from, as `***`, and the destination settings from the environment.
    @Test func configShowsTheKeyAsStars() throws {
        let folder = try TemporaryDirectory()
        let result = try CairnBinary.run(["config", "--library", folder.subpath("lib")], environment: [
            "CAIRN_IMMICH_API_KEY": Self.key, "CAIRN_DESTINATION": "immich", "CAIRN_IMMICH_URL": "https://photos.example.com",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("immich_api_key    *** (from the environment)"))
        #expect(result.standardOutput.contains("destination       immich"))
        #expect(result.standardOutput.contains("immich_url        https://photos.example.com"))
        #expect(!(result.standardOutput + result.standardError).contains(Self.key))
        let wrong = try CairnBinary.run(["config", "--library", folder.subpath("lib")], environment: ["CAIRN_DESTINATION": "dropbox"])
        #expect(wrong.status == 64 && wrong.standardError.contains("CAIRN_DESTINATION"), "\(wrong.standardError)")
    }
}
