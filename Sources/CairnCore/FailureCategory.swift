import SystemPackage

/// What kind of failure one file met: the one category enum of cairn. It is decided where the failure happens,
/// from typed facts (an `Errno`, a decoder's verdict, an HTTP status, a phase's time limit), and travels with the
/// reason to the catalog, the report, NDJSON and `cairn_failures_total{reason}`; the reason's English is for
/// people and nothing reads a category back out of it. The raw values are metric label values users alert on:
/// never rename one, only add.
public enum FailureCategory: String, Sendable, Codable, CaseIterable {
    /// A phase ran past its time limit.
    case timeout
    /// The item crashed the worker while it ran alone (the crash-loop guard).
    case crash
    /// The system refused access (EACCES, EPERM).
    case permission
    /// The file or a folder on its path is gone (ENOENT, ENOTDIR).
    case notFound = "not_found"
    /// The disk or a quota is full (ENOSPC, EDQUOT).
    case noSpace = "no_space"
    /// Reading or writing failed (EIO and other system errors).
    case io
    /// A format, codec or size this build does not take.
    case unsupported
    /// The bytes are damaged, truncated or not what they claim.
    case corrupt
    /// The file's media work needs more memory than the run may have (the cgroup's limit less a margin).
    case memory
    /// A server answered with an error (an Immich 5xx, a refusal).
    case server
    /// No answer from a server: the connection failed, dropped or timed out.
    case network
    /// A server refused the credentials or their permissions.
    case auth
    /// Anything else, and failures recorded before categories were kept.
    case other

    /// The category of a failed system call.
    public init(_ code: Errno) {
        switch code {
        case .permissionDenied, .notPermitted, .readOnlyFileSystem: self = .permission
        case .noSuchFileOrDirectory, .notDirectory: self = .notFound
        case .noSpace, .diskQuotaExceeded: self = .noSpace
        case .timedOut: self = .timeout
        default: self = .io
        }
    }

    /// A category stored as text; text that names none (a row from a later version) reads as `other`.
    public init(stored text: String?) {
        self = text.flatMap(FailureCategory.init(rawValue:)) ?? .other
    }
}
