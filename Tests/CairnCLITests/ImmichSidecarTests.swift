import CairnTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Issue 60: photos with XMP sidecars (darktable, digiKam, Lightroom) arrive in Immich with their sidecars. The
/// double judges each file part as the real server does (`canUploadFile`), so an upload that sends the sidecar
/// after the `filename` field is refused there as it is by Immich.
@Suite struct ImmichSidecarTests {
    @Test func aFolderWithSidecarsBesideMostPhotosArrivesCompleteEachSidecarWithItsPhoto() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        try fixture.writeDistinctJPEGs(8, prefix: "IMG_")
        var withSidecar: [String: Int] = [:]
        for index in 0..<6 {
            let xmp = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF/></x:xmpmeta>"# + String(repeating: " ", count: index)
            // Both namings in use: darktable's IMG.JPG.xmp, Lightroom's IMG.xmp.
            let name = index.isMultiple(of: 2) ? "IMG_\(index).JPG.xmp" : "IMG_\(index).xmp"
            try xmp.write(toFile: fixture.folder.subpath("src/" + name), atomically: true, encoding: .utf8)
            withSidecar["IMG_\(index).JPG"] = xmp.utf8.count
        }
        let result = try fixture.sync()
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let state = try await fixture.double.state()
        #expect(state.assets.count == 8)
        for index in 0..<8 {
            let name = "IMG_\(index).JPG"
            let asset = try #require(state.assets(withChecksum: try fixture.sha1(name)).first, "\(name) did not arrive")
            #expect(asset.sidecarBytes == withSidecar[name] ?? 0, "\(name)")
        }
        // Every upload said its length (no chunked body, which some proxies refuse).
        let traffic = try String(contentsOfFile: try #require(fixture.double.trafficLog), encoding: .utf8)
        let uploads = traffic.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["method"] as? String == "POST" && $0["path"] as? String == "/api/assets" }
        #expect(uploads.count == 8)
        for upload in uploads {
            #expect((upload["requestHeaders"] as? [String: String])?["content-length"] != nil, "\(upload)")
        }
    }

    /// Immich 3.0 keeps an empty upload as an asset it cannot show, 3.1 refuses it: an empty file is not sent,
    /// and the run names it with its reason; the others arrive.
    /// Immich 3.0 keeps an empty upload it can never show, 3.1 refuses any empty file part (sidecar included):
    /// against either, an empty file is not sent, and a photo beside an empty sidecar arrives without it.
    @Test(arguments: ["3.0.3", "3.1.0"])
    func anEmptyFileIsNotSentAndTheRunSaysWhy(_ version: String) async throws {
        let fixture = try ImmichDestinationTests.Fixture(serverVersion: version)
        try fixture.writeDistinctJPEGs(2, prefix: "OK_")
        _ = FileManager.default.createFile(atPath: fixture.folder.subpath("src/EMPTY.JPG"), contents: Data())
        _ = FileManager.default.createFile(atPath: fixture.folder.subpath("src/OK_0.JPG.xmp"), contents: Data())
        let result = try fixture.sync()
        #expect(result.status == 3, "\(result.standardOutput)\(result.standardError)")
        #expect((result.standardOutput + result.standardError).contains("EMPTY.JPG: empty file (0 bytes)"),
                "\(result.standardOutput)\(result.standardError)")
        let state = try await fixture.double.state()
        #expect(state.assets.count == 2 && state.assets.allSatisfy { $0.bytes > 0 })
        #expect(state.assets(withChecksum: try fixture.sha1("OK_0.JPG")).first?.sidecarBytes == 0)
    }
}

/// Issue 60: Immich lists albums shared with the user beside their own, and answers a refused album add with 200
/// and `no_permission`: `--album NAME` fills the user's own album, never a same-named one shared with them.
@Suite struct ImmichAlbumOwnershipTests {
    @Test func anAlbumFlagBesideASameNamedSharedAlbumFillsTheUsersOwn() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        try fixture.writeDistinctJPEGs(2, prefix: "T")
        // Another user's album "Trip", shared with this user to view.
        var request = URLRequest(url: URL(string: fixture.double.apiURL + "/albums")!)
        request.httpMethod = "POST"
        request.setValue("other-key", forHTTPHeaderField: "x-api-key")
        request.setValue("application/json", forHTTPHeaderField: "content-type")
        request.httpBody = Data(#"{"albumName":"Trip"}"#.utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        let shared = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["id"] as? String)
        try await fixture.double.share(albumID: shared, with: "tester", role: "viewer")

        let result = try fixture.sync(["--album", "Trip"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("added 2 assets to 1 Immich album"), "\(result.standardOutput)")
        let state = try await fixture.double.state()
        let mine = state.assets.filter { $0.owner == "tester" }
        #expect(mine.count == 2 && mine.allSatisfy { $0.albums == ["Trip"] }, "\(mine.map(\.albums))")
    }
}

/// Issue 60: what Immich's rules would refuse is found before anything is sent, or sent in a form Immich takes.
@Suite struct ImmichAcceptanceTests {
    /// A key made without `tag.create` cannot tag a run's deletions: a sync that would trash is refused at connect,
    /// naming the permission, with nothing uploaded; one that only brings content in goes ahead.
    @Test func aKeyWithoutAPermissionTheRunNeedsIsRefusedAtConnectByName() async throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        try MediaFixtures.jpeg(at: folder.subpath("src/A.JPG"), width: 64, height: 48)
        let limited = ["user.read", "asset.upload", "asset.update", "asset.read", "asset.delete", "tag.asset"]
        // A key that may upload but neither read nor delete: a sync's drift check needs the first, mending the second.
        let blind = ["user.read", "asset.upload", "asset.update"]
        let double = try ImmichDouble(users: ["limited-key": "tester", "blind-key": "tester", "keeper-key": "tester"],
                                      traffic: ImmichDestinationTests.trafficLog(),
                                      keyPermissions: ["limited-key": limited, "blind-key": blind,
                                                       "keeper-key": blind + ["asset.read"]])
        func sync(_ extra: [String], key: String = "limited-key") throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", folder.subpath("src"), "--plain", "--library", folder.subpath("lib"),
                                 "--destination", "immich", "--immich-url", double.baseURL] + extra,
                                environment: ["CAIRN_IMMICH_API_KEY": key])
        }
        let unread = try sync([], key: "blind-key")
        #expect(unread.status == 77 && unread.standardError.contains("lacks the permission asset.read"), "\(unread.standardError)")
        let unmended = try sync(["--destination-drift", "restore"], key: "keeper-key")
        #expect(unmended.status == 77 && unmended.standardError.contains("lacks the permission asset.delete"),
                "\(unmended.standardError)")
        let refused = try sync(["--apply-deletions"])
        #expect(refused.status == 77, "\(refused.standardOutput)\(refused.standardError)")
        #expect(refused.standardError.contains("lacks the permission tag.create"), "\(refused.standardError)")
        #expect(try await double.state().assets.isEmpty, "nothing was sent")
        let plain = try sync([])
        #expect(plain.status == 0, "\(plain.standardOutput)\(plain.standardError)")
        #expect(try await double.state().assets.count == 1)
    }

    /// Restoring from Immich's trash is `asset.delete`'s, which an import does not ask of a key: with a key that lacks
    /// it, content the source holds that sits in Immich's trash is left there and said so; the run still succeeds.
    @Test func contentInImmichsTrashStaysThereForAKeyThatMayNotRestore() async throws {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.subpath("src"), withIntermediateDirectories: true)
        try MediaFixtures.jpeg(at: folder.subpath("src/KEPT.JPG"), width: 80, height: 60)
        let double = try ImmichDouble(users: ["full-key": "tester", "upload-key": "tester"],
                                      traffic: ImmichDestinationTests.trafficLog(),
                                      keyPermissions: ["upload-key": ["user.read", "asset.upload", "asset.update"]])
        let id = try await double.upload(path: folder.subpath("src/KEPT.JPG"), key: "full-key")
        try await double.trash([id], key: "full-key")
        let result = try CairnBinary.run(["import", folder.subpath("src"), "--plain", "--library", folder.subpath("lib"),
                                          "--destination", "immich", "--immich-url", double.baseURL],
                                         environment: ["CAIRN_IMMICH_API_KEY": "upload-key"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("1 file is in Immich's trash and this API key may not restore it"),
                "\(result.standardOutput)")
        let state = try await double.state()
        #expect(state.assets.count == 1 && state.assets[0].isTrashed)
    }

    /// Immich types a file by its name: a JPEG without an extension, a `.3g2` clip and a Samsung `.MP` go under a
    /// name it takes, and the run says so; the library keeps each file's own name.
    @Test func filesImmichCannotTypeByTheirNameArriveUnderANameItTakes() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/scan.jpg"), width: 80, height: 60)
        try FileManager.default.moveItem(atPath: fixture.folder.subpath("src/scan.jpg"), toPath: fixture.folder.subpath("src/SCAN"))
        try MediaFixtures.video(at: fixture.folder.subpath("src/clip.mp4"), seconds: 1)
        try FileManager.default.moveItem(atPath: fixture.folder.subpath("src/clip.mp4"), toPath: fixture.folder.subpath("src/clip.3g2"))
        try MediaFixtures.video(at: fixture.folder.subpath("src/motion.mp4"), width: 200, seconds: 1)
        try FileManager.default.moveItem(atPath: fixture.folder.subpath("src/motion.mp4"),
                                         toPath: fixture.folder.subpath("src/20240101_120000.MP"))
        let result = try fixture.sync()
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("sent 3 files under a name whose extension Immich takes"), "\(result.standardOutput)")
        let state = try await fixture.double.state()
        let names = Set(state.assets.map(\.originalFileName))
        #expect(names == ["SCAN.jpg", "clip.mp4", "20240101_120000.MP4"], "\(names)")
        #expect(state.assets.first { $0.originalFileName == "clip.mp4" }?.type == "VIDEO")
    }
}
