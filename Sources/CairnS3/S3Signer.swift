import CairnCore
import CairnHashing
import Foundation

/// AWS Signature Version 4 for S3, as botocore's `S3SigV4Auth` signs (the tests check each case against it): the
/// canonical request of method, path, query, the headers sent and the payload's SHA-256, then the string to sign
/// under a key derived from the secret by date, region and service. Pure: the clock comes in as `date`.
public struct S3Signer: Sendable {
    public var credentials: S3Credentials
    public var region: String

    public init(credentials: S3Credentials, region: String) {
        self.credentials = credentials
        self.region = region
    }

    /// The payload hash of a request whose body is not signed (allowed by S3 over TLS only when a checksum header
    /// travels with the body; cairn signs every body it sends).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The SHA-256 of no bytes: the payload hash of a GET, HEAD or DELETE.
    public static let emptyPayload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The headers to send with a request: `headers` (names in any case) plus `host`, `x-amz-date`,
    /// `x-amz-content-sha256`, the session token when there is one, and `authorization`.
    public func sign(method: String, host: String, path: String, query: [(String, String)],
                     headers: [(String, String)], payloadHash: String, date: Date) -> [(String, String)] {
        let stamp = Self.timestamp(date)
        var all = headers.map { ($0.0.lowercased(), $0.1) }
        all.append(("host", host))
        all.append(("x-amz-date", stamp))
        all.append(("x-amz-content-sha256", payloadHash))
        if let token = credentials.sessionToken { all.append(("x-amz-security-token", token)) }
        let canonicalHeaders = Dictionary(grouping: all, by: \.0)
            .map { name, values in (name, values.map { Self.trimmed($0.1) }.joined(separator: ",")) }
            .sorted { $0.0 < $1.0 }
        let signedHeaders = canonicalHeaders.map(\.0).joined(separator: ";")
        let canonicalRequest = [
            method, path, Self.canonicalQuery(query),
            canonicalHeaders.map { "\($0.0):\($0.1)\n" }.joined(), signedHeaders, payloadHash,
        ].joined(separator: "\n")
        let scope = "\(stamp.prefix(8))/\(region)/s3/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", stamp, scope,
                            Self.sha256Hex(Array(canonicalRequest.utf8))].joined(separator: "\n")
        let signature = signingKey(day: String(stamp.prefix(8))).authenticate(stringToSign).lowercaseHex
        all.append(("authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), "
                        + "SignedHeaders=\(signedHeaders), Signature=\(signature)"))
        return all
    }

    private func signingKey(day: String) -> SigningKey {
        SigningKey(Array("AWS4\(credentials.secretAccessKey.revealed)".utf8))
            .derive(day).derive(region).derive("s3").derive("aws4_request")
    }

    /// `20261129T204500Z`, in UTC.
    static func timestamp(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let civil = CivilTime.civil(fromDays: days)
        let inDay = seconds - days * 86_400
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(civil.year)\(two(civil.month))\(two(civil.day))T\(two(inDay / 3600))\(two(inDay / 60 % 60))\(two(inDay % 60))Z"
    }

    /// Query pairs sorted by encoded name, then value, each encoded as S3 wants (RFC 3986 unreserved kept).
    static func canonicalQuery(_ query: [(String, String)]) -> String {
        query.map { (S3Encoding.component($0.0), S3Encoding.component($0.1)) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// A header value with its ends trimmed and inner runs of spaces made one, as SigV4 canonicalises values.
    static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            .trimmingCharacters(in: .whitespaces)
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        // OpenSSL fails only when it cannot allocate; a signature that cannot be made is then refused by the store.
        ((try? SHA256Digest.hash(bytes)) ?? []).lowercaseHex
    }
}

/// One step of SigV4's key derivation: HMAC-SHA256 keyed by the previous step.
private struct SigningKey {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    func derive(_ text: String) -> SigningKey { SigningKey(authenticate(text)) }
    func authenticate(_ text: String) -> [UInt8] {
        (try? SHA256Digest.authenticationCode(key: bytes, message: Array(text.utf8))) ?? []
    }
}

/// Percent-encoding as S3 and SigV4 want it: every byte but A–Z, a–z, 0–9 and `-_.~` (and `/` in a key's path).
public enum S3Encoding {
    /// A query name or value, or a path segment: `/` encoded too.
    public static func component(_ text: String) -> String { encode(text, keepingSlash: false) }
    /// An object key in the request path: its slashes kept.
    public static func path(_ text: String) -> String { encode(text, keepingSlash: true) }

    private static func encode(_ text: String, keepingSlash: Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                 UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                 UInt8(ascii: "~"):
                out.append(byte)
            case UInt8(ascii: "/") where keepingSlash:
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
