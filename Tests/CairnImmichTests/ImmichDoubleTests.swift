import CairnTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The stand-in Immich server itself, spoken to in raw HTTP: the Immich behaviour cairn's tests lean on (ping's
/// Accept quirk, duplicates by checksum, trashed duplicates, the API key) and its fault profile.
@Suite struct ImmichDoubleTests {
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: Data
        var json: Any? { try? JSONSerialization.jsonObject(with: body) }
        var object: [String: Any] { json as? [String: Any] ?? [:] }
    }

    static let key = "test-key"

    /// One request on a fresh ephemeral session (no cookies, no cache, no shared connection between tests).
    static func send(_ double: ImmichDouble, _ method: String, _ path: String, key: String? = key,
                     headers: [String: String] = [:], json: Any? = nil, body: Data? = nil) async throws -> Reply {
        var request = URLRequest(url: URL(string: double.baseURL + path)!)
        request.httpMethod = method
        if let key { request.setValue(key, forHTTPHeaderField: "x-api-key") }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "content-type")
        }
        if let body { request.httpBody = body }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return Reply(status: http.statusCode, headers: fields, body: data)
    }

    /// A multipart upload as Immich's clients send it.
    static func upload(_ double: ImmichDouble, _ bytes: Data, name: String, checksumHeader: String? = nil,
                       key: String? = key) async throws -> Reply {
        let boundary = "cairn-\(UUID().uuidString)"
        var body = Data()
        func field(_ name: String, _ value: String) {
            body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        field("fileCreatedAt", "2024-05-06T07:08:09.000Z")
        field("fileModifiedAt", "2024-05-06T07:08:09.000Z")
        body += Data(("--\(boundary)\r\nContent-Disposition: form-data; name=\"assetData\"; filename=\"\(name)\"\r\n"
            + "Content-Type: image/jpeg\r\n\r\n").utf8)
        body += bytes + Data("\r\n--\(boundary)--\r\n".utf8)
        var headers = ["content-type": "multipart/form-data; boundary=\(boundary)"]
        if let checksumHeader { headers["x-immich-checksum"] = checksumHeader }
        return try await send(double, "POST", "/api/assets", key: key, headers: headers, body: body)
    }

    /// One part of a hand-made multipart upload, sent in the order given.
    enum Part {
        case field(String, String)
        case file(field: String, filename: String, Data)
    }

    /// An upload whose parts go out exactly in `parts`' order (the dates are added first).
    static func upload(_ double: ImmichDouble, parts: [Part]) async throws -> Reply {
        let boundary = "cairn-\(UUID().uuidString)"
        var body = Data()
        for part in [.field("fileCreatedAt", "2024-05-06T07:08:09.000Z"), .field("fileModifiedAt", "2024-05-06T07:08:09.000Z")]
            + parts {
            switch part {
            case .field(let name, let value):
                body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
            case .file(let field, let filename, let bytes):
                body += Data(("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field)\"; filename=\"\(filename)\"\r\n"
                    + "Content-Type: application/octet-stream\r\n\r\n").utf8)
                body += bytes + Data("\r\n".utf8)
            }
        }
        body += Data("--\(boundary)--\r\n".utf8)
        return try await send(double, "POST", "/api/assets",
                              headers: ["content-type": "multipart/form-data; boundary=\(boundary)"], body: body)
    }

    /// Real server: `asset-media.service.ts` `canUploadFile` judges each file part as it arrives by
    /// `body.filename || file.originalName`; a sidecar after a `filename` field is judged by that name.
    @Test func aSidecarAfterTheFilenameFieldIsJudgedByThatNameAndTheUploadRefused() async throws {
        let double = try ImmichDouble()
        let photo = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let xmp = Data(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"/>"#.utf8)
        let refused = try await Self.upload(double, parts: [
            .field("filename", "IMG_1.jpg"), .file(field: "sidecarData", filename: "IMG_1.jpg.xmp", xmp),
            .file(field: "assetData", filename: "IMG_1.jpg", photo),
        ])
        #expect(refused.status == 400)
        #expect(refused.object["message"] as? String == "Unsupported file type IMG_1.jpg")
        #expect(try await double.state().assets.isEmpty, "a refused part refuses the whole upload")

        let taken = try await Self.upload(double, parts: [
            .file(field: "sidecarData", filename: "IMG_1.jpg.xmp", xmp), .field("filename", "IMG_1.jpg"),
            .file(field: "assetData", filename: "IMG_1.jpg", photo),
        ])
        #expect(taken.status == 201, "\(String(decoding: taken.body, as: UTF8.self))")
        let asset = try #require(try await double.state().assets.first)
        #expect(asset.sidecarBytes == xmp.count && asset.originalFileName == "IMG_1.jpg")
    }

    /// Real server: `server/src/utils/mime-types.ts`: images, videos and `.xmp` sidecars by the last extension,
    /// in any case; no extension, `.3g2` and Samsung's `.MP` are no type Immich takes.
    @Test(arguments: [
        ("IMG_2.HEIC", 201, "IMAGE"), ("DSC_3.NEF", 201, "IMAGE"), ("clip.MTS", 201, "VIDEO"), ("clip.3gpp", 201, "VIDEO"),
        ("clip.3g2", 400, ""), ("20240101_120000.MP", 400, ""), ("noextension", 400, ""), (".jpg", 400, ""),
        ("notes.xmp", 400, ""),
    ])
    func fileTypesAreJudgedByExtensionFromTheRealLists(_ name: String, _ status: Int, _ type: String) async throws {
        let double = try ImmichDouble()
        let reply = try await Self.upload(double, parts: [
            .file(field: "assetData", filename: name, Data((0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 13) })),
        ])
        #expect(reply.status == status, "\(name): \(String(decoding: reply.body, as: UTF8.self))")
        if status == 400 {
            #expect(reply.object["message"] as? String == "Unsupported file type \(name)")
        } else {
            #expect(try await double.state().assets.first?.type == type)
        }
    }

    static func sha1Hex(_ data: Data, in work: TemporaryDirectory) throws -> String {
        let path = try work.write(data, to: "sha1-\(UUID().uuidString)")
        return String(String(decoding: try ExternalTool.run(["sha1sum", path]), as: UTF8.self).prefix(40))
    }

    /// Real server: `server/src/controllers/server.controller.ts` `pingServer` answers `{res: "pong"}` whatever the
    /// `Accept` header (the 406 came only from the web app's routes outside `/api`).
    @Test func pingAnswersPongWhateverTheAcceptHeader() async throws {
        let double = try ImmichDouble()
        for accept in [nil, "application/json", "*/*", "text/html"] as [String?] {
            let pong = try await Self.send(double, "GET", "/api/server/ping", key: nil,
                                           headers: accept.map { ["accept": $0] } ?? [:])
            #expect(pong.status == 200, "Accept: \(accept ?? "none")")
            #expect(pong.object["res"] as? String == "pong")
        }
        let version = try await Self.send(double, "GET", "/api/server/version", key: nil)
        #expect(version.object["major"] as? Int == 3 && version.object["patch"] as? Int == 3)
    }

    @Test func everyOtherOperationWantsAKnownAPIKey() async throws {
        let double = try ImmichDouble(users: ["key-a": "alice"])
        for key in [nil, "wrong"] as [String?] {
            let reply = try await Self.send(double, "GET", "/api/users/me", key: key)
            #expect(reply.status == 401)
            #expect(reply.object["message"] as? String == "Invalid API key")
            #expect(reply.object["statusCode"] as? Int == 401)
        }
        let me = try await Self.send(double, "GET", "/api/users/me", key: "key-a")
        #expect(me.status == 200)
        #expect(me.object["email"] as? String == "alice@example.com")
    }

    @Test func aReuploadIsADuplicateAndTheFileIsCreatedOnce() async throws {
        let work = try TemporaryDirectory()
        let double = try ImmichDouble(users: ["key-a": "alice", "key-b": "bob"])
        let bytes = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let hex = try Self.sha1Hex(bytes, in: work)

        let first = try await Self.upload(double, bytes, name: "IMG_1.jpg", key: "key-a")
        #expect(first.status == 201)
        #expect(first.object["status"] as? String == "created")
        let again = try await Self.upload(double, bytes, name: "copy.jpg", key: "key-a")
        #expect(again.status == 200)
        #expect(again.object["status"] as? String == "duplicate")
        #expect(again.object["id"] as? String == first.object["id"] as? String)
        // The checksum header settles it before the body; base64 and hex both name the SHA1.
        let base64 = Data((0..<20).map { UInt8(hex.dropFirst($0 * 2).prefix(2), radix: 16)! }).base64EncodedString()
        let byHeader = try await Self.upload(double, bytes, name: "x.jpg", checksumHeader: base64, key: "key-a")
        #expect(byHeader.status == 200 && byHeader.object["status"] as? String == "duplicate")
        // Another user's library is separate.
        let other = try await Self.upload(double, bytes, name: "IMG_1.jpg", key: "key-b")
        #expect(other.status == 201)

        let state = try await double.state()
        #expect(state.creations[hex] == 2)
        let mine = state.assets(withChecksum: hex).filter { $0.owner == "alice" }
        #expect(mine.count == 1)
        #expect(mine.first?.originalFileName == "IMG_1.jpg" && mine.first?.bytes == 5000 && mine.first?.type == "IMAGE")
        // Kept on disk under DIR/files/<owner>/<asset id>, byte for byte.
        let id = try #require(first.object["id"] as? String)
        let files = double.dataDirectory + "/files"
        let relative = try #require(FileManager.default.subpaths(atPath: files)?.first { $0.hasSuffix(id) })
        #expect(try Data(contentsOf: URL(fileURLWithPath: files + "/" + relative)) == bytes)
    }

    @Test func bulkUploadCheckRejectsKnownChecksumsAndSaysWhenTheyAreTrashed() async throws {
        let work = try TemporaryDirectory()
        let double = try ImmichDouble()
        let bytes = Data("a small file standing in for a photo".utf8)
        let hex = try Self.sha1Hex(bytes, in: work)
        let id = try #require(try await Self.upload(double, bytes, name: "a.jpg").object["id"] as? String)
        let deleted = try await Self.send(double, "DELETE", "/api/assets", json: ["ids": [id]])
        #expect(deleted.status == 204)

        let check = try await Self.send(double, "POST", "/api/assets/bulk-upload-check", json: ["assets": [
            ["id": "known", "checksum": hex], ["id": "new", "checksum": String(repeating: "0", count: 40)],
        ]])
        let results = try #require(check.object["results"] as? [[String: Any]])
        #expect(results.count == 2)
        #expect(results[0]["action"] as? String == "reject" && results[0]["reason"] as? String == "duplicate")
        #expect(results[0]["assetId"] as? String == id && results[0]["isTrashed"] as? Bool == true)
        #expect(results[1]["action"] as? String == "accept" && results[1]["id"] as? String == "new")

        let restored = try await Self.send(double, "POST", "/api/trash/restore/assets", json: ["ids": [id]])
        #expect(restored.object["count"] as? Int == 1)
        let state = try await double.state()
        #expect(state.assets.first?.isTrashed == false)
        #expect(state.forceDeletes == 0)
    }

    /// Real server: `server/src/utils/access.ts` `requireAccess` over `access.repository.ts` `checkOwnerAccess`:
    /// delete, restore and one asset's read or update allow every id or none; a purged id, another user's or a
    /// Locked Folder one (never reachable with an API key) refuses the whole batch and changes nothing.
    @Test func deleteRestoreAndOneAssetsReadAllowEveryIdOrNone() async throws {
        let double = try ImmichDouble(users: ["test-key": "tester", "other-key": "other"])
        var ids: [String] = []
        for index in 0..<4 {
            let bytes = Data("photo \(index) standing in for a JPEG".utf8)
            ids.append(try #require(try await Self.upload(double, bytes, name: "P\(index).jpg").object["id"] as? String))
        }
        let foreign = try #require(try await Self.upload(double, Data("another user's".utf8), name: "o.jpg",
                                                         key: "other-key").object["id"] as? String)
        try await double.purge(assetIDs: [ids[0]])
        try await double.lock(assetIDs: [ids[1]])
        for bad in [ids[0], ids[1], foreign] {
            let refused = try await Self.send(double, "DELETE", "/api/assets", json: ["ids": [ids[2], bad], "force": false])
            #expect(refused.status == 400)
            #expect(refused.object["message"] as? String == "Not found or no asset.delete access")
            let restore = try await Self.send(double, "POST", "/api/trash/restore/assets", json: ["ids": [ids[2], bad]])
            #expect(restore.status == 400)
            #expect(restore.object["message"] as? String == "Not found or no asset.delete access")
            let read = try await Self.send(double, "GET", "/api/assets/\(bad)")
            #expect(read.status == 400)
            #expect(read.object["message"] as? String == "Not found or no asset.read access")
        }
        #expect(try await double.state().assets.allSatisfy { !$0.isTrashed }, "a refused batch changes nothing")

        // Without the bad ids: trashed; restore answers the number of ids asked, trashed or not.
        let trashed = try await Self.send(double, "DELETE", "/api/assets", json: ["ids": [ids[2]], "force": false])
        #expect(trashed.status == 204)
        let restored = try await Self.send(double, "POST", "/api/trash/restore/assets", json: ["ids": [ids[2], ids[3]]])
        #expect(restored.status == 200 && restored.object["count"] as? Int == 2)
        let none = try await Self.send(double, "POST", "/api/trash/restore/assets", json: ["ids": [String]()])
        #expect(none.object["count"] as? Int == 0)
        #expect(try await double.state().assets.allSatisfy { !$0.isTrashed })
    }

    /// Real server: `tag.service.ts` `bulkTagAssets` and `album.service.ts` `addAssetsToAlbums` keep the ids
    /// `checkAccess` allows and drop the others silently (purged, locked, another user's): no 400 for the batch.
    @Test func tagAndAlbumAddsDropInaccessibleIdsSilently() async throws {
        let double = try ImmichDouble(users: ["test-key": "tester", "other-key": "other"])
        var ids: [String] = []
        for index in 0..<4 {
            ids.append(try #require(try await Self.upload(double, Data("tagged \(index)".utf8), name: "T\(index).jpg")
                .object["id"] as? String))
        }
        let foreign = try #require(try await Self.upload(double, Data("someone else's".utf8), name: "F.jpg",
                                                         key: "other-key").object["id"] as? String)
        try await double.purge(assetIDs: [ids[0]])
        try await double.lock(assetIDs: [ids[1]])
        let tags = try await Self.send(double, "PUT", "/api/tags", json: ["tags": ["cairn/v1/run/x"]])
        let tagID = try #require((tags.json as? [[String: Any]])?.first?["id"] as? String)
        let tagged = try await Self.send(double, "PUT", "/api/tags/assets", json: ["tagIds": [tagID], "assetIds": ids + [foreign]])
        #expect(tagged.status == 200 && tagged.object["count"] as? Int == 2, "\(tagged.object)")
        let state = try await double.state()
        #expect(state.assets.filter { $0.tags.contains("cairn/v1/run/x") }.map(\.id).sorted() == [ids[2], ids[3]].sorted())

        let album = try await Self.send(double, "POST", "/api/albums", json: ["albumName": "A"])
        let albumID = try #require(album.object["id"] as? String)
        let added = try await Self.send(double, "PUT", "/api/albums/assets", json: ["albumIds": [albumID], "assetIds": [ids[1], ids[2]]])
        #expect(added.status == 200 && added.object["success"] as? Bool == true, "\(added.object)")
        #expect(try await double.state().assets.filter { $0.albums == ["A"] }.map(\.id) == [ids[2]])
        let none = try await Self.send(double, "PUT", "/api/albums/assets", json: ["albumIds": [albumID], "assetIds": [ids[1], foreign]])
        #expect(none.object["error"] as? String == "no_permission", "\(none.object)")
    }

    /// Real server: `search.service.ts` `searchMetadata` gives an API key `visibility: 'not-locked'` when none is
    /// asked (`utils/database.ts` `searchAssetBuilder`): a hidden asset (a Live Photo's movie) is found, a locked one
    /// is not; `trashedAfter` searches the trash by `deletedAt` (and implies `withDeleted`).
    @Test func searchFindsHiddenAssetsNotLockedOnesAndTheTrashByItsDate() async throws {
        let double = try ImmichDouble()
        var ids: [String] = []
        for index in 0..<3 {
            ids.append(try #require(try await Self.upload(double, Data("search \(index)".utf8), name: "S\(index).jpg")
                .object["id"] as? String))
        }
        #expect(try await Self.send(double, "PUT", "/api/assets/\(ids[0])", json: ["visibility": "hidden"]).status == 200)
        try await double.lock(assetIDs: [ids[1]])
        func found(_ query: [String: Any]) async throws -> Set<String> {
            let reply = try await Self.send(double, "POST", "/api/search/metadata", json: query)
            #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
            let items = ((reply.object["assets"] as? [String: Any])?["items"] as? [[String: Any]]) ?? []
            return Set(items.compactMap { $0["id"] as? String })
        }
        #expect(try await found([:]) == [ids[0], ids[2]])
        let before = Date()
        #expect(try await Self.send(double, "DELETE", "/api/assets", json: ["ids": [ids[2]], "force": false]).status == 204)
        #expect(try await found([:]) == [ids[0]], "trashed assets only when asked for")
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let since = iso.string(from: before.addingTimeInterval(-1))
        #expect(try await found(["trashedAfter": since]) == [ids[2]])
        let later = iso.string(from: Date().addingTimeInterval(60))
        #expect(try await found(["trashedAfter": later]).isEmpty)
    }

    /// Real server: `middleware/file-upload.interceptor.ts` `_handleFile` refuses an empty file part with 400
    /// "File is empty" from v3.1.0 on; 3.0.3 keeps it.
    @Test(arguments: [("3.0.3", 201), ("3.1.0", 400)])
    func anEmptyFileIsKeptBy3_0AndRefusedBy3_1(_ version: String, _ status: Int) async throws {
        let double = try ImmichDouble(serverVersion: version)
        let reply = try await Self.upload(double, Data(), name: "EMPTY.jpg")
        #expect(reply.status == status, "\(version): \(String(decoding: reply.body, as: UTF8.self))")
        if status == 400 { #expect(reply.object["message"] as? String == "File is empty") }
        let sidecar = try await Self.upload(double, parts: [
            .file(field: "sidecarData", filename: "S.xmp", Data()),
            .file(field: "assetData", filename: "S.jpg", Data("a photo with an empty sidecar".utf8)),
        ])
        #expect(sidecar.status == status)
    }

    /// Real server: `album.service.ts` `getAll` (owned and shared albums, `isOwned`/`isShared`/`name` filters) and
    /// `addAssetsToAlbums` (200 with `no_permission` for a viewer's album, `duplicate` when nothing was new).
    @Test func albumsSharedWithTheUserAreListedAndAViewerCannotAddToThem() async throws {
        let double = try ImmichDouble(users: ["test-key": "tester", "other-key": "other"])
        let mine = try #require(try await Self.upload(double, Data("my photo".utf8), name: "m.jpg").object["id"] as? String)
        let theirs = try await Self.send(double, "POST", "/api/albums", key: "other-key", json: ["albumName": "Trip"])
        let sharedID = try #require(theirs.object["id"] as? String)
        try await double.share(albumID: sharedID, with: "tester", role: "viewer")
        let own = try await Self.send(double, "POST", "/api/albums", json: ["albumName": "Trip"])
        let ownID = try #require(own.object["id"] as? String)

        func listed(_ query: String) async throws -> [String] {
            let reply = try await Self.send(double, "GET", "/api/albums" + query)
            return (reply.json as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }
        #expect(Set(try await listed("")) == [sharedID, ownID], "a shared album is listed beside one's own")
        #expect(try await listed("?isOwned=true&name=Trip") == [ownID])
        #expect(try await listed("?isOwned=false") == [sharedID])
        #expect(try await listed("?isShared=true") == [sharedID])
        #expect(try await listed("?name=Elsewhere").isEmpty)

        let refused = try await Self.send(double, "PUT", "/api/albums/assets", json: ["albumIds": [sharedID], "assetIds": [mine]])
        #expect(refused.status == 200)
        #expect(refused.object["success"] as? Bool == false && refused.object["error"] as? String == "no_permission")
        let added = try await Self.send(double, "PUT", "/api/albums/assets", json: ["albumIds": [ownID], "assetIds": [mine]])
        #expect(added.object["success"] as? Bool == true)
        let again = try await Self.send(double, "PUT", "/api/albums/assets", json: ["albumIds": [ownID], "assetIds": [mine]])
        #expect(again.object["success"] as? Bool == false && again.object["error"] as? String == "duplicate")
    }

    /// Real server: `asset.service.ts` `updateExif` keeps the offset of `dateTimeOriginal` as the photo's time zone
    /// (`utils/date.ts` `extractTimeZone`, Luxon's fixed-zone names): `Z` makes it UTC.
    @Test func aDateSetWithAnOffsetKeepsThatOffsetAsItsZone() async throws {
        let double = try ImmichDouble()
        let id = try #require(try await Self.upload(double, Data("dated".utf8), name: "d.jpg").object["id"] as? String)
        for (text, zone) in [("2019-07-12T14:00:00.000+02:00", "UTC+2"), ("2019-07-12T17:30:00.000+05:30", "UTC+5:30"),
                             ("2019-07-12T07:00:00.000-05:00", "UTC-5"), ("2019-07-12T12:00:00.000Z", "UTC")] {
            let reply = try await Self.send(double, "PUT", "/api/assets/\(id)", json: ["dateTimeOriginal": text])
            #expect(reply.status == 200)
            let asset = try #require(try await double.state().assets.first)
            #expect(asset.timeZone == zone, "\(text)")
            #expect(asset.dateTimeOriginal?.hasPrefix("2019-07-12T12:00:00") == true, "the same instant: \(text)")
        }
    }

    @Test func aBodyAboveMaxBodyBytesGets413() async throws {
        let double = try ImmichDouble(faults: .init(maxBodyBytes: 2000))
        let small = try await Self.upload(double, Data(repeating: 1, count: 100), name: "s.jpg")
        #expect(small.status == 201)
        let big = try await Self.upload(double, Data(repeating: 2, count: 10_000), name: "b.jpg")
        #expect(big.status == 413)
        #expect(try await double.state().assets.count == 1)
    }

    @Test func aSeededFaultProfileFailsTheSameRequestsEveryTime() async throws {
        let double = try ImmichDouble()
        var runs: [[Int]] = []
        for _ in 0..<2 {
            try await double.setFaults(.init(seed: 7, status500: 0.3, status429: 0.1, retryAfterSeconds: 2))
            var statuses: [Int] = []
            for _ in 0..<30 {
                let reply = try await Self.send(double, "GET", "/api/users/me")
                statuses.append(reply.status)
                if reply.status == 429 { #expect(reply.headers["retry-after"] == "2") }
            }
            runs.append(statuses)
        }
        #expect(runs[0] == runs[1])
        #expect(runs[0].contains(500) && runs[0].contains(200))
        #expect(Set(runs[0]).isSubset(of: [200, 429, 500]))
        // Ping is never faulted: a client's first contact tells it the server is there.
        let ping = try await Self.send(double, "GET", "/api/server/ping", key: nil)
        #expect(ping.status == 200)
    }

    @Test func resetsDropTheConnectionBeforeOrAfterTheUploadHappens() async throws {
        let double = try ImmichDouble(faults: .init(resetMidBody: 1))
        let bytes = Data(repeating: 7, count: 64 * 1024)
        await #expect(throws: (any Error).self) { try await Self.upload(double, bytes, name: "mid.jpg") }
        #expect(try await double.state().assets.isEmpty)

        try await double.setFaults(.init(resetBeforeResponse: 1))
        await #expect(throws: (any Error).self) { try await Self.upload(double, bytes, name: "late.jpg") }
        // The ambiguous outcome: the client saw no answer, yet the asset exists; its checksum settles it.
        let state = try await double.state()
        #expect(state.assets.map(\.originalFileName) == ["late.jpg"])
        #expect(state.creations.values.reduce(0, +) == 1)
    }
}

/// The API key's permissions and the server's media types, as the real server enforces and publishes them.
@Suite struct ImmichDoublePermissionTests {
    /// Each operation of the filtered spec with the permission it asks (`x-immich-permission`), and a request for it.
    static func specOperations() throws -> [(method: String, path: String, permission: String)] {
        let spec = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/ImmichAPI/openapi.yaml")
        var found: [(String, String, String)] = []
        var path = "", method = ""
        for line in try String(contentsOf: spec, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  /"), line.hasSuffix(":") { path = String(line.dropFirst(2).dropLast()) }
            if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                method = String(line.dropFirst(4).dropLast()).uppercased()
            }
            if line.hasPrefix("      x-immich-permission: ") {
                found.append((method, path, String(line.dropFirst("      x-immich-permission: ".count))))
            }
        }
        return found
    }

    /// Real server: `server/src/services/auth.service.ts` `authenticate`: an API key without an operation's
    /// permission gets 403 "Missing required permission: X"; every operation's X is the spec's.
    @Test func everyOperationAsksTheSpecsPermissionOfAKeyThatLacksIt() async throws {
        let operations = try Self.specOperations()
        #expect(operations.count >= 13, "\(operations)")
        let double = try ImmichDouble(users: ["none-key": "limited"], keyPermissions: ["none-key": ["activity.read"]])
        for operation in operations {
            let path = "/api" + operation.path.replacingOccurrences(of: "{id}", with: "7c3b1a2e-4d5f-4a6b-8c9d-0e1f2a3b4c5d")
            let reply = try await ImmichDoubleTests.send(double, operation.method, path, key: "none-key",
                                                         json: operation.method == "GET" ? nil : [String: Any]())
            #expect(reply.status == 403, "\(operation.method) \(path)")
            #expect(reply.object["message"] as? String == "Missing required permission: \(operation.permission)",
                    "\(operation.method) \(path): \(reply.object)")
        }
    }

    /// Real server: `api-key.service.ts` `getMine` (no permission asked) and `server.service.ts`
    /// `getSupportedMediaTypes` (no key asked).
    @Test func aKeyReadsItsPermissionsAndAnyoneTheMediaTypes() async throws {
        let double = try ImmichDouble(users: ["some-key": "limited"], keyPermissions: ["some-key": ["asset.upload", "user.read"]])
        let mine = try await ImmichDoubleTests.send(double, "GET", "/api/api-keys/me", key: "some-key")
        #expect(mine.status == 200)
        #expect(Set(mine.object["permissions"] as? [String] ?? []) == ["asset.upload", "user.read"])
        let types = try await ImmichDoubleTests.send(double, "GET", "/api/server/media-types", key: nil)
        #expect(types.status == 200)
        let image = types.object["image"] as? [String] ?? [], video = types.object["video"] as? [String] ?? []
        #expect(image.contains(".jpg") && image.contains(".heic") && video.contains(".mp4") && !video.contains(".3g2"))
        #expect(types.object["sidecar"] as? [String] == [".xmp"])
    }
}
