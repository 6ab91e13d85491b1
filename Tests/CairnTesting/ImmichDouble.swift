import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `immich-double` product (a stand-in Immich server) run as a real child process for a test: started on a
/// random port, read through its test endpoints (`/_double/state`, `/_double/faults`), stopped with SIGTERM.
public final class ImmichDouble: @unchecked Sendable {
    /// "http://127.0.0.1:PORT"
    public let baseURL: String
    /// "http://127.0.0.1:PORT/api", what an Immich client is given.
    public var apiURL: String { baseURL + "/api" }
    /// Where the double keeps the uploaded files (DIR/files/<owner id>/<asset id>).
    public let dataDirectory: String
    /// The NDJSON traffic log, when asked for (scripts/validate-immich-traffic checks it).
    public let trafficLog: String?
    private let process: Process
    private let ownedData: TemporaryDirectory?
    private let lock = NSLock()
    private var stopped = false

    /// Fault profile of the double (every rate a probability in 0...1); see immich-double's Faults.swift.
    public struct Faults: Codable, Sendable, Equatable {
        public var seed: UInt64 = 1
        public var status500: Double = 0
        public var status429: Double = 0
        public var status502: Double = 0
        public var retryAfterSeconds: Int = 1
        public var resetBeforeResponse: Double = 0
        public var resetMidBody: Double = 0
        public var stallSeconds: Double = 0
        public var stallRate: Double = 0
        public var maxBodyBytes: Int?
        /// The paths faults are drawn for (`/api/assets/*`: every path below); nil: every Immich route but ping and version.
        public var paths: [String]?
        /// The methods faults are drawn for; nil: every method.
        public var methods: [String]?

        public init(seed: UInt64 = 1, status500: Double = 0, status429: Double = 0, status502: Double = 0,
                    retryAfterSeconds: Int = 1, resetBeforeResponse: Double = 0, resetMidBody: Double = 0,
                    stallSeconds: Double = 0, stallRate: Double = 0, maxBodyBytes: Int? = nil, paths: [String]? = nil,
                    methods: [String]? = nil) {
            self.seed = seed
            self.status500 = status500
            self.status429 = status429
            self.status502 = status502
            self.paths = paths
            self.methods = methods
            self.retryAfterSeconds = retryAfterSeconds
            self.resetBeforeResponse = resetBeforeResponse
            self.resetMidBody = resetMidBody
            self.stallSeconds = stallSeconds
            self.stallRate = stallRate
            self.maxBodyBytes = maxBodyBytes
        }
    }

    /// `GET /_double/state`: what the double holds and counts.
    public struct State: Decodable, Sendable {
        public struct Asset: Decodable, Sendable {
            public var id: String
            /// The owner's user name (from `--user KEY=NAME`).
            public var owner: String
            /// SHA1, hex.
            public var checksum: String
            public var originalFileName: String
            /// IMAGE or VIDEO.
            public var type: String
            /// timeline, hidden, archive or locked.
            public var visibility: String
            public var livePhotoVideoId: String?
            public var isTrashed: Bool
            public var sidecarBytes: Int
            public var bytes: Int
            /// ISO 8601.
            public var fileCreatedAt: String
            /// ISO 8601, set by `PUT /assets/{id}`.
            public var dateTimeOriginal: String?
            /// The zone Immich keeps with it ("UTC+2").
            public var timeZone: String?
            public var latitude: Double?
            public var longitude: Double?
            /// Milliseconds.
            public var duration: Int?
            public var isFavorite: Bool
            /// The caption ("" when none).
            public var description: String
            /// Tag paths ("a/b/c").
            public var tags: [String]
            /// Album names.
            public var albums: [String]
            /// The stack it is in (`POST /api/stacks`), nil when in none.
            public var stackId: String?
            /// That stack's primary asset id, nil when in none.
            public var stackPrimaryAssetId: String?
        }

        public var assets: [Asset]
        /// Assets created per hex checksum: a file uploaded "exactly once" shows 1.
        public var creations: [String: Int]
        /// `DELETE /api/assets` requests with `force: true` (cairn must never send one).
        public var forceDeletes: Int
        /// Requests on Immich routes (/api), faulted ones included.
        public var requests: Int

        public func assets(withChecksum hex: String) -> [Asset] { assets.filter { $0.checksum == hex.lowercased() } }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts the double. `users` maps API keys to user names (default `test-key` → `tester`); `data` defaults to a
    /// temporary folder removed with the double; `traffic` is a path for the NDJSON log.
    /// `keyPermissions`: the permissions of some keys (Immich's names), where not `all`.
    public init(users: [String: String] = ["test-key": "tester"], data: String? = nil, traffic: String? = nil,
                faults: Faults? = nil, serverVersion: String = "3.0.3", keyPermissions: [String: [String]] = [:],
                timeout: TimeInterval = 30) throws {
        let owned = data == nil ? try TemporaryDirectory(prefix: "immich-double") : nil
        let dataDirectory = data ?? owned!.path
        var arguments = ["--data", dataDirectory, "--port", "0", "--server-version", serverVersion]
        for (key, name) in users.sorted(by: { $0.key < $1.key }) { arguments += ["--user", "\(key)=\(name)"] }
        for (key, permissions) in keyPermissions.sorted(by: { $0.key < $1.key }) {
            arguments += ["--key-permissions", "\(key)=\(permissions.joined(separator: ","))"]
        }
        if let traffic { arguments += ["--traffic", traffic] }
        if let faults { arguments += ["--faults", String(decoding: try JSONEncoder().encode(faults), as: UTF8.self)] }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: CairnBinary.product("immich-double"))
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        guard let line = Self.firstLine(of: output.fileHandleForReading, timeout: timeout),
              let range = line.range(of: "listening on ") else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            throw Failure(description: "immich-double did not report its port within \(timeout) s")
        }
        self.process = process
        self.ownedData = owned
        self.dataDirectory = dataDirectory
        self.trafficLog = traffic
        self.baseURL = String(line[range.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit { stop() }

    /// SIGTERM, then waits for the double to exit (it finishes in-flight requests and closes the traffic log).
    public func stop() {
        let alreadyStopped = lock.withLock { () -> Bool in
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    public func state() async throws -> State {
        try JSONDecoder().decode(State.self, from: try await request("GET", "/_double/state"))
    }

    /// Sets the fault profile from now on (its generator restarts from the seed).
    public func setFaults(_ faults: Faults) async throws {
        _ = try await request("POST", "/_double/faults", body: try JSONEncoder().encode(faults))
    }

    /// Revokes an API key (every request with it then answers 401), or reinstates it, as a person does in Immich.
    public func setKey(_ key: String, revoked: Bool) async throws {
        _ = try await request("POST", revoked ? "/_double/keys/revoke" : "/_double/keys/reinstate", body: Data(key.utf8))
    }

    /// Deletes these assets for good, as a person emptying Immich's trash (or its 30-day purge) does.
    public func purge(assetIDs: [String]) async throws {
        _ = try await request("POST", "/_double/assets/purge", body: try JSONEncoder().encode(assetIDs))
    }

    /// Assets `userName` already holds, one per hex checksum, without their files (a large library uploaded by
    /// another client). Returns their ids in the checksums' order.
    public func seed(checksums: [String], userName: String) async throws -> [String] {
        let body = try JSONSerialization.data(withJSONObject: ["userName": userName, "checksums": checksums])
        return try JSONDecoder().decode([String].self, from: try await request("POST", "/_double/assets/seed", body: body))
    }

    /// How many requests the Immich routes have answered (faulted ones included), without the whole state.
    public func requestCount() async throws -> Int {
        struct Count: Decodable { var requests: Int }
        return try JSONDecoder().decode(Count.self, from: try await request("GET", "/_double/requests")).requests
    }

    /// Moves these assets to the Locked Folder, as a person does in Immich's web app.
    public func lock(assetIDs: [String]) async throws {
        _ = try await request("POST", "/_double/assets/lock", body: try JSONEncoder().encode(assetIDs))
    }

    /// Shares an album with another user as `role` (`editor` or `viewer`), as its owner does in Immich's web app.
    public func share(albumID: String, with userName: String, role: String) async throws {
        let body = try JSONSerialization.data(withJSONObject: ["albumId": albumID, "userName": userName, "role": role])
        _ = try await request("POST", "/_double/albums/share", body: body)
    }

    /// A request to the double's test endpoints; the body of a 2xx answer.
    private func request(_ method: String, _ path: String, body: Data? = nil) async throws -> Data {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "content-type") }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
            throw Failure(description: "\(method) \(path): \(String(decoding: data, as: UTF8.self))")
        }
        return data
    }

    /// The child's first stdout line, read on a thread of its own so a silent child cannot hang the test.
    private static func firstLine(of handle: FileHandle, timeout: TimeInterval) -> String? {
        final class Box: @unchecked Sendable { var line: String? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var bytes = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
                if let newline = bytes.firstIndex(of: 0x0A) {
                    box.line = String(decoding: bytes[..<newline], as: UTF8.self)
                    break
                }
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return box.line
    }
}
