import CairnCore

/// A failure's reason reduced to a few fixed values, so `cairn_failures_total{reason}` stays low in cardinality
/// whatever the decoders and the system say (their text names formats, sizes and sometimes files).
public enum FailureCategory: String, Sendable, CaseIterable {
    case timeout
    case crash
    case permission
    case notFound = "not_found"
    case noSpace = "no_space"
    case io
    case unsupported
    case corrupt
    case server
    case other

    /// Sorts a printed failure reason; the first matching rule wins, so the specific ones come first.
    public init(_ reason: String) {
        let text = reason.lowercased()
        func has(_ words: String...) -> Bool { words.contains { text.contains($0) } }
        if has("timed out", "timeout", "took longer") { self = .timeout }
        else if has("crash") { self = .crash }
        else if has("permission denied", "operation not permitted", "eacces", "eperm") { self = .permission }
        else if has("no such file", "enoent", "vanished", "disappeared") { self = .notFound }
        else if has("no space", "enospc", "quota") { self = .noSpace }
        else if has("input/output error", "eio", "read error", "short read") { self = .io }
        else if has("unsupported", "not supported", "no decoder", "unknown format") { self = .unsupported }
        else if has("invalid", "corrupt", "truncated", "premature", "malformed", "decode", "bad ") { self = .corrupt }
        else if has("http", "server", "immich", "connection") { self = .server }
        else { self = .other }
    }

    public init(_ reason: FailureReason) { self.init(reason.description) }
}
