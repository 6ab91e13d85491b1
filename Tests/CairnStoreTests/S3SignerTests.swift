import CairnS3
import CairnTesting
import Foundation
import Testing

/// Every signing case checked against botocore's `S3SigV4Auth` signing the same request (the AWS CLI's and boto3's
/// signer, from the project's Python tools): same headers in, same `Authorization` out.
@Suite struct S3SignerTests {
    struct Case: Sendable {
        var method: String
        var key: String
        var query: [(String, String)] = []
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        var token: String?
        var region = "us-east-1"
        var seconds: TimeInterval = 1_795_000_000
        /// Sent as `UNSIGNED-PAYLOAD`: the body's SHA1 is in a signed header the store checks instead.
        var unsigned = false
    }

    static let cases: [Case] = [
        Case(method: "GET", key: "originals/ab/cdef.jpg"),
        Case(method: "GET", key: "originals/ab/cdef.jpg", headers: [("Range", "bytes=0-1048575")]),
        Case(method: "HEAD", key: "a key with spaces/and+plus/é (1).jpg", region: "eu-central-1"),
        Case(method: "PUT", key: "derived/thumb/ab.webp",
             headers: [("Content-Type", "application/octet-stream"), ("If-None-Match", "*"),
                       ("x-amz-checksum-sha256", "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=")],
             body: Array("hello world".utf8)),
        Case(method: "GET", key: "",
             query: [("list-type", "2"), ("prefix", "test/a b/é+"), ("start-after", "test/a b/x~y*z"),
                     ("max-keys", "1000"), ("encoding-type", "url")]),
        Case(method: "DELETE", key: "trash/2026/x", token: "FwoGZXIvYXdzE//token/with+slash=", seconds: 1_700_000_000),
        Case(method: "PUT", key: "tapes/seg 1.mp4", query: [("partNumber", "3"), ("uploadId", "a/b+c==")],
             headers: [("Content-MD5", "XrY7u+Ae7tCTyyK7j1rNww=="), ("Content-Length", "5")],
             body: Array("hello".utf8), seconds: 1_900_000_123),
        Case(method: "PUT", key: "originals/2f/aae6c35c94fcfb415dbe95f408b9ce91ee846ed.jpg",
             headers: [("Content-Type", "application/octet-stream"), ("If-None-Match", "*"),
                       ("x-amz-checksum-sha1", "Kq5sNclPz7QV2+lfQIuc6R7oRu0=")],
             body: Array("hello world".utf8), unsigned: true),
    ]

    @Test func signaturesMatchBotocoresForEveryCase() throws {
        let python = ExternalTool.packageRoot + "/.build/python-tools/bin/python"
        if (try? ExternalTool.run([python, "-c", "import botocore"])) == nil {
            try ExternalTool.run([ExternalTool.packageRoot + "/scripts/ensure-python-tools"])
        }
        for testCase in Self.cases {
            let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                            sessionToken: testCase.token)
            let signer = S3Signer(credentials: credentials, region: testCase.region)
            let path = "/bucket" + (testCase.key.isEmpty ? "" : "/" + S3Encoding.path(testCase.key))
            let payloadHash = testCase.unsigned ? S3Signer.unsignedPayload : try SHA256Hex.of(testCase.body)
            let signed = signer.sign(method: testCase.method, host: "127.0.0.1:9000", path: path, query: testCase.query,
                                     headers: testCase.headers, payloadHash: payloadHash,
                                     date: Date(timeIntervalSince1970: testCase.seconds))
            let ours = Dictionary(signed.map { ($0.0, $0.1) }, uniquingKeysWith: { $1 })
            let query = testCase.query.map { "\(S3Encoding.component($0.0))=\(S3Encoding.component($0.1))" }
                .joined(separator: "&")
            let request: [String: Any] = [
                "method": testCase.method, "url": "http://127.0.0.1:9000\(path)" + (query.isEmpty ? "" : "?" + query),
                "headers": Dictionary(testCase.headers.map { ($0.0, $0.1) }, uniquingKeysWith: { $1 }),
                "body": testCase.body.map { String($0) }.joined(separator: ","), "key": testCase.key,
                "region": testCase.region, "token": testCase.token ?? "", "seconds": testCase.seconds,
                "unsigned": testCase.unsigned,
            ]
            let output = try ExternalTool.run([python, "-c", Self.botocoreSigner],
                                              input: try JSONSerialization.data(withJSONObject: request))
            let theirs = try #require(try JSONSerialization.jsonObject(with: output) as? [String: String])
            #expect(ours["authorization"] == theirs["Authorization"], "\(testCase.method) \(testCase.key)")
            #expect(ours["x-amz-date"] == theirs["X-Amz-Date"])
            #expect(ours["x-amz-content-sha256"] == theirs["X-Amz-Content-SHA256"])
            #expect(ours["x-amz-security-token"] == theirs["X-Amz-Security-Token"])
            // The key's path as botocore quotes it when it builds the URL itself.
            #expect(S3Encoding.path(testCase.key) == theirs["quoted_key"])
        }
    }

    /// Signs the request on stdin with botocore at the given time; prints the headers it added.
    static let botocoreSigner = """
    import datetime, json, sys
    from urllib.parse import quote
    import botocore.auth
    import botocore.config
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    case = json.load(sys.stdin)
    moment = datetime.datetime.fromtimestamp(case["seconds"], datetime.timezone.utc).replace(tzinfo=None)
    botocore.auth.get_current_datetime = lambda *args, **kwargs: moment
    body = bytes(int(b) for b in case["body"].split(",") if b)
    request = AWSRequest(method=case["method"], url=case["url"], headers=dict(case["headers"]), data=body)
    credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", case["token"] or None)
    if case["unsigned"]:
        request.context["client_config"] = botocore.config.Config(s3={"payload_signing_enabled": False})
    botocore.auth.S3SigV4Auth(credentials, "s3", case["region"]).add_auth(request)
    out = {name: request.headers[name] for name in
           ["Authorization", "X-Amz-Date", "X-Amz-Content-SHA256", "X-Amz-Security-Token"] if name in request.headers}
    out["quoted_key"] = quote(case["key"], safe="/~")
    print(json.dumps(out))
    """
}

enum SHA256Hex {
    static func of(_ bytes: [UInt8]) throws -> String {
        let output = try ExternalTool.run(["sha256sum"], input: Data(bytes))
        return String(decoding: output.prefix(64), as: UTF8.self)
    }
}
