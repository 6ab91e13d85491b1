import Foundation

/// The suite's S3 server: the SeaweedFS `scripts/test` started (its folder in `CAIRN_TEST_S3`), or, when a test runs
/// without it (`swift test` alone), one this process starts with `scripts/s3-server` and stops at exit. Tests share
/// its bucket and keep apart by key prefix.
public enum TestS3 {
    /// The AWS settings a client of the server needs (`AWS_ENDPOINT_URL_S3`, `AWS_REGION`, the key pair) and the
    /// bucket's name under `CAIRN_TEST_S3_BUCKET`.
    public static func environment() throws -> [String: String] {
        let folder = try server.get()
        let text = try String(contentsOfFile: folder + "/env", encoding: .utf8)
        var environment: [String: String] = ["HOME": folder]  // no user's ~/.aws reaches a test
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return environment
    }

    /// `s3://BUCKET/PREFIX/` with a prefix no other test uses.
    public static func freshLocation() throws -> String {
        let bucket = try environment()["CAIRN_TEST_S3_BUCKET"] ?? "cairn-test"
        return "s3://\(bucket)/test-\(UUID().uuidString.lowercased())/"
    }

    private static let server: Result<String, any Error> = Result {
        try ScriptedServer.folder(variable: "CAIRN_TEST_S3", script: script, prefix: "cairn-s3-")
    }

    private static var script: String { ExternalTool.packageRoot + "/scripts/s3-server" }
}
