import AsyncHTTPClient
import CairnCore
import CairnHashing
import CairnStore
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// A store in an S3-compatible bucket (AWS, MinIO, SeaweedFS, Backblaze B2, Wasabi, R2, Ceph RGW): every request
/// signed with Signature Version 4, every body with its SHA-256 in the signature and `x-amz-checksum-sha256`, a
/// put sent with `If-None-Match: *` so that the store keeps the first complete copy of a key (a 412 is the key
/// already there), transient failures (a 5xx, `SlowDown`, a dropped connection) tried again with backoff.
/// Owns its HTTP client: call `close()` when done.
public final class S3Store: ObjectStore {
    public let settings: S3Settings
    let http: HTTPClient
    let retry: RetryPolicy
    let clock: any Clock<Duration>
    let now: @Sendable () -> Date
    /// The size of an upload's parts; a file no larger goes up in one request.
    public let partSize: Int
    /// Parts sent at once.
    public let partsInFlight: Int
    /// Parts sent by this store so far (a resumed upload sends only those the store lacks).
    public var partsUploaded: Int { partsSent.withLock { $0 } }
    let partsSent = Locked(0)
    /// Asked with a part's number before it is sent; a failure it gives ends the put there, as a kill would.
    let partFault = Locked<@Sendable (Int) -> StoreError?>({ _ in nil })
    /// Whether the store checks `x-amz-checksum-sha1` (nil until asked: `checksSHA1()`).
    let sha1Checked = Locked<Bool?>(nil)

    public init(settings: S3Settings, retry: RetryPolicy = RetryPolicy(attempts: 5),
                clock: any Clock<Duration> = ContinuousClock(), now: @escaping @Sendable () -> Date = { Date() },
                connectTimeout: Duration = .seconds(10), partSize: Int = 16 << 20, partsInFlight: Int = 4)
        throws(S3SettingsError) {
        let connect = TimeAmount.nanoseconds(connectTimeout.components.seconds * 1_000_000_000
                                             + connectTimeout.components.attoseconds / 1_000_000_000)
        var configuration = HTTPClient.Configuration(
            timeout: .init(connect: connect, read: .seconds(120), write: .seconds(120)))
        configuration.decompression = .disabled
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 16
        if let authorities = settings.certificateAuthorities {
            guard FileManager.default.isReadableFile(atPath: authorities) else {
                throw S3SettingsError("the CA bundle \(authorities) (AWS_CA_BUNDLE) cannot be read")
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(authorities)
            configuration.tlsConfiguration = tls
        }
        self.http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.settings = settings
        self.partSize = max(partSize, 5 << 20)  // S3's smallest part but the last
        self.partsInFlight = max(1, partsInFlight)
        self.retry = retry
        self.clock = clock
        self.now = now
    }

    /// Makes each part `fault` answers for fail before it is sent (the tests' stand-in for a kill mid-upload).
    package func failParts(_ fault: @escaping @Sendable (Int) -> StoreError?) {
        partFault.withLock { $0 = fault }
    }

    public func close() async {
        try? await http.shutdown()
    }

    public var description: String { settings.location.description }

    // MARK: ObjectStore

    public func put(_ key: ObjectKey, fromFile path: String) async throws(StoreError) -> PutOutcome {
        let size = try Self.fileSize(path, key: key)
        if size > Int64(partSize) { return try await putInParts(key, fromFile: path, size: size) }
        return try await put(key, bytes: try await Self.readFile(path, range: 0 ..< size, key: key))
    }

    public func put(_ key: ObjectKey, bytes: [UInt8]) async throws(StoreError) -> PutOutcome {
        let sha256 = try Self.sha256(bytes, key: key)
        let response = try await send("PUT", key: key, headers: [
            ("content-length", String(bytes.count)), ("if-none-match", "*"),
            ("x-amz-checksum-sha256", Data(sha256).base64EncodedString()),
            ("content-type", "application/octet-stream"),
        ], body: bytes, payloadHash: sha256.lowercaseHex, accepting: [200, 412])
        return response.status == 412 ? .alreadyThere : .created
    }

    public func read(_ key: ObjectKey, range: Range<Int64>?) async throws(StoreError) -> [UInt8] {
        var headers: [(String, String)] = []
        if let range {
            guard !range.isEmpty else { return [] }
            headers.append(("range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)"))
        }
        // 416: the range starts past the end of the object, which reads as no bytes.
        let response = try await send("GET", key: key, headers: headers, accepting: [200, 206, 416])
        return response.status == 416 ? [] : response.body
    }

    public func size(of key: ObjectKey) async throws(StoreError) -> Int64? {
        let response = try await send("HEAD", key: key, accepting: [200, 404])
        guard response.status == 200 else { return nil }
        guard let length = response.header("content-length").flatMap(Int64.init) else {
            throw StoreError(.server, key: key.text, "the store's answer to HEAD has no Content-Length")
        }
        return length
    }

    public func list(prefix: String, after: ObjectKey?, limit: Int) async throws(StoreError) -> [StoredObject] {
        var query = [("list-type", "2"), ("prefix", settings.location.prefix + prefix),
                     ("max-keys", String(min(max(limit, 1), 1000))), ("encoding-type", "url")]
        if let after { query.append(("start-after", settings.location.prefix + after.text)) }
        let response = try await send("GET", key: nil, query: query, accepting: [200])
        // Keys come URL-encoded (`encoding-type=url`): a key may hold characters XML cannot.
        guard let listing = S3XMLFields.records("Contents", fields: ["Key", "Size"], in: response.body) else {
            throw StoreError(.server, "the store's listing of \(description)\(prefix) is not valid XML")
        }
        var objects: [StoredObject] = []
        for record in listing {
            guard let encoded = record["Key"], case let key = encoded.removingPercentEncoding ?? encoded,
                  key.hasPrefix(settings.location.prefix) else { continue }
            objects.append(StoredObject(key: try ObjectKey(String(key.dropFirst(settings.location.prefix.count))),
                                        size: record["Size"].flatMap(Int64.init) ?? 0))
        }
        return Array(objects.prefix(limit))
    }

    public func delete(_ key: ObjectKey) async throws(StoreError) {
        _ = try await send("DELETE", key: key, accepting: [200, 204, 404])
    }

    // MARK: Requests

    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// Sends one request, again while it fails in a way that may pass; a status outside `accepting` is a failure
    /// named from the store's own error code.
    func send(_ method: String, key: ObjectKey?, query: [(String, String)] = [], headers: [(String, String)] = [],
              body: [UInt8] = [], payloadHash: String = S3Signer.emptyPayload,
              accepting: Set<Int>) async throws(StoreError) -> Answer {
        var attempt = 0
        while true {
            attempt += 1
            let failure: StoreError
            var retryAfter: Duration?
            switch await Result(catching: {
                try await exchange(method, key: key, query: query, headers: headers, body: body, payloadHash: payloadHash)
            }) {
            case .success(let answer):
                if accepting.contains(answer.status) { return answer }
                let refusal = S3ErrorResponse(status: answer.status, body: answer.body)
                failure = refusal.storeError(key: key?.text, store: description, secrets: secrets)
                guard refusal.isTransient else { throw failure }
                retryAfter = answer.header("retry-after").flatMap(Int64.init).map { Duration.seconds($0) }
            case .failure(let error):
                failure = StoreError(.network, key: key?.text,
                                     S3ErrorResponse.scrub("\(description): no answer: \(error)", secrets: secrets))
            }
            guard attempt < retry.attempts else { throw failure }
            let pause = retry.delay(after: attempt, retryAfter: retryAfter, draw: Double.random(in: 0 ... 1))
            do { try await clock.sleep(for: pause) } catch { throw failure }
        }
    }

    private func exchange(_ method: String, key: ObjectKey?, query: [(String, String)], headers: [(String, String)],
                          body: [UInt8], payloadHash: String) async throws -> Answer {
        let target = requestTarget(key: key, query: query)
        let signer = S3Signer(credentials: settings.credentials, region: settings.region)
        let signed = signer.sign(method: method, host: target.host, path: target.path, query: query, headers: headers,
                                 payloadHash: payloadHash, date: now())
        var request = HTTPClientRequest(url: target.url)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in signed where name != "host" { request.headers.add(name: name, value: value) }
        if !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await http.execute(request, timeout: .seconds(300))
        var bytes: [UInt8] = []
        if method != "HEAD" {
            let buffer = try await response.body.collect(upTo: 1 << 30)
            bytes = Array(buffer.readableBytesView)
        }
        return Answer(status: Int(response.status.code), headers: response.headers, body: bytes)
    }

    /// The URL, `Host` and canonical path of a request for `key` (the bucket itself when nil).
    func requestTarget(key: ObjectKey?, query: [(String, String)]) -> (url: String, host: String, path: String) {
        let endpoint = settings.endpoint
        let scheme = endpoint.scheme?.lowercased() ?? "https"
        var host = endpoint.host ?? ""
        if let port = endpoint.port { host += ":\(port)" }
        let base = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
        let objectPath = key.map { "/" + S3Encoding.path(settings.location.prefix + $0.text) } ?? "/"
        let path: String
        switch settings.addressing {
        case .path:
            path = base + "/" + settings.location.bucket + (key == nil ? "" : objectPath)
        case .virtual:
            host = settings.location.bucket + "." + host
            path = base + objectPath
        }
        let queryText = S3Signer.canonicalQuery(query)
        return ("\(scheme)://\(host)\(path)\(queryText.isEmpty ? "" : "?" + queryText)", host, path)
    }

    /// The texts no message may carry.
    var secrets: [String] {
        [settings.credentials.accessKeyID, settings.credentials.secretAccessKey.revealed,
         settings.credentials.sessionToken].compactMap { $0 }.filter { !$0.isEmpty }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
