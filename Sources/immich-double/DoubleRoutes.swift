import CairnCore
import Foundation
import Hummingbird
import ImmichAPI

/// The test-only endpoints under /_double: not Immich, never faulted, never in the traffic log.
enum DoubleRoutes {
    static func register(on router: Router<DoubleContext>, store: Store, users: Users, faults: FaultInjector) {
        router.get("/_double/state") { _, _ -> Response in
            json(try encoder.encode(await store.snapshot(users: users)))
        }
        router.get("/_double/faults") { _, _ -> Response in
            json(try encoder.encode(faults.profile))
        }
        router.post("/_double/faults") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            let profile: FaultProfile
            do { profile = try JSONDecoder().decode(FaultProfile.self, from: Data(buffer: body)) } catch {
                return badRequest("bad fault profile: \(error)")
            }
            faults.set(profile)
            return json(try encoder.encode(profile))
        }
        // A person's acts in Immich's web app, on the asset ids of the JSON array in the body.
        let acts: [(String, @Sendable ([String]) async -> Void)] = [
            ("/_double/assets/purge", { await store.purge($0) }), ("/_double/assets/lock", { await store.lock($0) }),
        ]
        for (path, act) in acts {
            router.post(RouterPath(path)) { request, _ -> Response in
                var request = request
                let ids = try JSONDecoder().decode([String].self, from: Data(buffer: try await request.collectBody(upTo: 1 << 20)))
                await act(ids.map { $0.lowercased() })
                return json(Data("{}".utf8))
            }
        }
        // Assets a large library already holds: `{"userName", "checksums": [hex]}`, answered with their ids.
        router.post("/_double/assets/seed") { request, _ -> Response in
            var request = request
            struct Seed: Decodable { var userName: String, checksums: [String] }
            let seed = try JSONDecoder().decode(Seed.self, from: Data(buffer: try await request.collectBody(upTo: 64 << 20)))
            guard let user = users.user(named: seed.userName) else { return badRequest("unknown user") }
            let ids = await store.seed(seed.checksums.compactMap(ChecksumText.digest), owner: user.id, now: Date())
            return json(try JSONEncoder().encode(ids))
        }
        // How many requests the Immich routes answered, without the whole state.
        router.get("/_double/requests") { _, _ -> Response in
            json(Data("{\"requests\":\(await store.requests)}".utf8))
        }
        // A person sharing an album: `{"albumId", "userName", "role"}` (role `editor` or `viewer`).
        router.post("/_double/albums/share") { request, _ -> Response in
            var request = request
            struct Share: Decodable { var albumId: String, userName: String, role: String }
            let share = try JSONDecoder().decode(Share.self, from: Data(buffer: try await request.collectBody(upTo: 4096)))
            guard let user = users.user(named: share.userName),
                  let role = Components.Schemas.AlbumUserRole(rawValue: share.role)
            else { return badRequest("unknown user or role") }
            await store.share(share.albumId.lowercased(), with: user.id, as: role)
            return json(Data("{}".utf8))
        }
        // The body is the key: revoked, every request with it answers 401 until it is reinstated.
        for (path, isRevoked) in [("/_double/keys/revoke", true), ("/_double/keys/reinstate", false)] {
            router.post(RouterPath(path)) { request, _ -> Response in
                var request = request
                let key = String(buffer: try await request.collectBody(upTo: 4096))
                users.revoke(key.trimmingCharacters(in: .whitespacesAndNewlines), isRevoked)
                return json(Data("{}".utf8))
            }
        }
    }

    static var encoder: JSONEncoder { Timestamp.jsonEncoder() }

    static func badRequest(_ text: String) -> Response {
        Response(status: .badRequest, headers: [.contentType: "text/plain"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    /// A JSON answer: the double's own routes', a fault's, Nest's for an unknown route.
    static func json(_ data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
