import CairnCore
import CairnImmich
import CairnTesting
import Foundation
import Testing

/// What the client decides without a server: addresses, failure classes, backoff, dates, the key's secrecy.
@Suite struct ImmichClientLogicTests {
    @Test(arguments: [
        "https://photos.example.com", "https://photos.example.com/", "https://photos.example.com/api",
        "https://photos.example.com/api/", "HTTPS://Photos.Example.com/api",
    ])
    func everyFormOfAnAddressNamesOneEndpoint(_ text: String) throws {
        let endpoint = try ImmichEndpoint(text)
        #expect(endpoint.apiURL.absoluteString == "https://photos.example.com/api")
    }

    @Test func aSubpathKeepsItsPrefix() throws {
        #expect(try ImmichEndpoint("http://nas.local:2283/immich").apiURL.absoluteString == "http://nas.local:2283/immich/api")
    }

    @Test(arguments: ["", "photos.example.com", "ftp://example.com", "https://"])
    func notAnAddress(_ text: String) {
        #expect(throws: ImmichEndpointError.self) { try ImmichEndpoint(text) }
    }

    @Test func failureClasses() {
        let auth = ImmichFailure.classify(status: 401, body: #"{"message":"Invalid API key","statusCode":401}"#,
                                          retryAfter: nil, operation: "upload")
        #expect(auth.kind == .needsAuth)
        #expect(auth.message.contains("Invalid API key"))
        let busy = ImmichFailure.classify(status: 429, body: "", retryAfter: "7", operation: "upload")
        #expect(busy.kind == .retryable)
        #expect(busy.retryAfter == .seconds(7))
        let proxy = ImmichFailure.classify(status: 413, body: "<html>Request Entity Too Large</html>", retryAfter: nil,
                                           operation: "upload")
        #expect(proxy.kind == .permanent)
        #expect(proxy.message.contains("request-size limit"))
        let validation = ImmichFailure.classify(
            status: 400, body: #"{"message":["fileCreatedAt must be a valid ISO 8601 date string"],"error":"Bad Request"}"#,
            retryAfter: nil, operation: "upload")
        #expect(validation.kind == .permanent)
        #expect(validation.message == "fileCreatedAt must be a valid ISO 8601 date string")
        #expect(ImmichFailure.classify(status: 503, body: "", retryAfter: nil, operation: "x").kind == .retryable)
        #expect(ImmichFailure.classify(status: 404, body: "", retryAfter: nil, operation: "x").kind == .permanent)
    }

    @Test func backoffGrowsToItsCapAndHonoursRetryAfter() {
        let policy = RetryPolicy(attempts: 6, base: .milliseconds(100), cap: .seconds(1), retryAfterCap: .seconds(30))
        #expect(policy.delay(after: 1, retryAfter: nil, draw: 1) == .milliseconds(100))
        #expect(policy.delay(after: 3, retryAfter: nil, draw: 1) == .milliseconds(400))
        #expect(policy.delay(after: 10, retryAfter: nil, draw: 1) == .seconds(1))
        #expect(policy.delay(after: 3, retryAfter: nil, draw: 0) == .zero)
        #expect(policy.delay(after: 1, retryAfter: .seconds(5), draw: 0.5) == .seconds(5))
        #expect(policy.delay(after: 1, retryAfter: .seconds(3600), draw: 0.5) == .seconds(30))
    }

    @Test func timestampsCarryAnOffset() {
        let instant = Date(timeIntervalSince1970: 1_700_000_000.25)
        #expect(Timestamp.withMilliseconds(instant) == "2023-11-14T22:13:20.250Z")
        #expect(Timestamp.withMilliseconds(instant, offsetSeconds: 2 * 3600) == "2023-11-15T00:13:20.250+02:00")
    }

    @Test func theKeyNeverPrintsAndAKeyFileOthersCanReadWarns() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/immich.key"
        try "secret-key-123\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let (key, warning) = try ImmichAPIKey.read(file: path)
        #expect("\(key)" == "***")
        #expect(String(reflecting: key) == "***")
        #expect(warning?.contains("chmod 600") == true)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try ImmichAPIKey.read(file: path).warning == nil)
        #expect(throws: ImmichAPIKeyError.self) { try ImmichAPIKey.read(file: folder.path + "/missing") }
    }
}
