import Foundation

/// A secret (a secret access key, a session token) that never prints: its description is `***`.
public struct S3Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    let revealed: String
    public init(_ value: String) { revealed = value }
    public var description: String { "***" }
    public var debugDescription: String { "***" }
}

/// The key pair (and session token) requests are signed with.
public struct S3Credentials: Sendable, Equatable {
    public var accessKeyID: String
    public var secretAccessKey: S3Secret
    public var sessionToken: String? { token?.revealed }
    var token: S3Secret?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = S3Secret(secretAccessKey)
        self.token = sessionToken.map(S3Secret.init)
    }
}

/// `s3://BUCKET/PREFIX`: where in which bucket a store keeps its objects.
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    public var bucket: String
    /// Empty, or ends with `/`.
    public var prefix: String

    public init(parsing text: String) throws(S3SettingsError) {
        guard text.hasPrefix("s3://") else { throw .init("\(text): a store on S3 is named s3://BUCKET or s3://BUCKET/PREFIX") }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        // S3's bucket naming rules: 3 to 63 lower-case letters, digits, dots and hyphens.
        guard (3 ... 63).contains(bucket.count),
              bucket.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-" || $0 == ".") }) else {
            throw .init("\(text): \"\(bucket)\" is not a bucket name (3 to 63 lower-case letters, digits, dots, hyphens)")
        }
        var prefix = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        while prefix.hasSuffix("//") { prefix.removeLast() }
        if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
        self.bucket = bucket
        self.prefix = prefix
    }

    public var description: String { "s3://\(bucket)/\(prefix)" }
}

/// How requests name the bucket: in the path (`https://host/bucket/key`, what MinIO, SeaweedFS and most NAS stores
/// expect) or in the host name (`https://bucket.host/key`, AWS's own).
public enum S3Addressing: String, Sendable {
    case path
    case virtual
}

/// Everything a request to the store needs but the key: resolved once from the environment and the AWS files, by
/// the conventions the AWS CLI and SDKs follow, so a user's existing setup works as it is.
public struct S3Settings: Sendable {
    public var location: S3Location
    public var endpoint: URL
    public var region: String
    public var credentials: S3Credentials
    public var addressing: S3Addressing
    /// A PEM file of certificate authorities to trust instead of the system's (`AWS_CA_BUNDLE`).
    public var certificateAuthorities: String?

    /// Endpoint: `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's `endpoint_url`, else AWS's for the region.
    /// Region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, else `us-east-1`. Credentials:
    /// `AWS_ACCESS_KEY_ID` with `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`), else the profile's
    /// (`AWS_PROFILE`, else `default`) in `~/.aws/credentials`, then in `~/.aws/config` (or the files
    /// `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE` name). Addressing: the profile's `s3.addressing_style`,
    /// else virtual-host for AWS and path-style for any other endpoint. Not read: SSO, `credential_process`,
    /// instance metadata.
    public static func resolve(_ store: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(S3SettingsError) -> S3Settings {
        let location = try S3Location(parsing: store)
        let home = environment["HOME"] ?? NSHomeDirectory()
        let profile = environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        let credentialsFile = AWSFile(path: environment["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials")
        let configFile = AWSFile(path: environment["AWS_CONFIG_FILE"] ?? home + "/.aws/config")
        let configSection = profile == "default" ? "default" : "profile \(profile)"
        func setting(_ key: String) -> String? {
            configFile.value(key, section: configSection)
        }
        let region = [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"], setting("region")]
            .compactMap { $0 }.first { !$0.isEmpty } ?? "us-east-1"

        let endpointText = [environment["AWS_ENDPOINT_URL_S3"], environment["AWS_ENDPOINT_URL"], setting("endpoint_url")]
            .compactMap { $0 }.first { !$0.isEmpty } ?? "https://s3.\(region).amazonaws.com"
        guard let endpoint = URL(string: endpointText), let scheme = endpoint.scheme,
              ["http", "https"].contains(scheme.lowercased()), endpoint.host != nil else {
            throw .init("the S3 endpoint \"\(endpointText)\" is not an http:// or https:// address")
        }

        let credentials: S3Credentials
        if let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty {
            guard let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else {
                throw .init("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
            }
            credentials = S3Credentials(accessKeyID: key, secretAccessKey: secret,
                                        sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        } else if let fromFile = credentialsFile.credentials(section: profile)
                    ?? configFile.credentials(section: configSection) {
            credentials = fromFile
        } else {
            throw .init("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give the profile "
                        + "\"\(profile)\" aws_access_key_id and aws_secret_access_key in \(credentialsFile.path)")
        }

        let isAWS = endpoint.host?.lowercased().hasSuffix(".amazonaws.com") ?? false
        let style = configFile.value("addressing_style", section: configSection, within: "s3")
        let addressing = style.flatMap(S3Addressing.init(rawValue:)) ?? (isAWS ? .virtual : .path)
        let authorities = environment["AWS_CA_BUNDLE"].flatMap { $0.isEmpty ? nil : $0 } ?? setting("ca_bundle")
        return S3Settings(location: location, endpoint: endpoint, region: region, credentials: credentials,
                          addressing: addressing, certificateAuthorities: authorities)
    }
}

/// Why the store's settings could not be resolved; never holds a secret.
public struct S3SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// An AWS shared configuration file (INI: `[section]`, `key = value`, a nested block under `s3 =`); a missing
/// file reads as empty.
struct AWSFile {
    let path: String
    private var sections: [String: [String: String]] = [:]

    init(path: String) {
        self.path = path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        var section: String?
        var nest: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = String(rawLine)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
                section = trimmed.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                nest = nil
                continue
            }
            guard let section, let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            let indented = line.first == " " || line.first == "\t"
            if !indented { nest = value.isEmpty ? key : nil }
            let name = indented ? nest.map { "\($0).\(key)" } ?? key : key
            if !(value.isEmpty && !indented) { sections[section, default: [:]][name] = value }
        }
    }

    func value(_ key: String, section: String, within nest: String? = nil) -> String? {
        sections[section]?[nest.map { "\($0).\(key)" } ?? key]
    }

    func credentials(section: String) -> S3Credentials? {
        guard let key = value("aws_access_key_id", section: section), !key.isEmpty,
              let secret = value("aws_secret_access_key", section: section), !secret.isEmpty else { return nil }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret,
                             sessionToken: value("aws_session_token", section: section))
    }
}
