/// Where a file failed in a run: the walk, hashing, one of the import lanes, or linking its sidecar. Stored in the
/// catalog and written in `--report` lines by its raw value.
public enum FailurePhase: String, Codable, Sendable, CaseIterable {
    case scanning, hashing, transfer, metadata, thumbnail, synthesis, sidecar
}

/// A file that could not be imported, and why.
public struct ImportFailure: Sendable, Equatable, Codable {
    public var relativePath: String
    public var phase: FailurePhase
    public var reason: FailureReason
    public var retryable: Bool

    public init(relativePath: String, phase: FailurePhase, reason: FailureReason, retryable: Bool) {
        self.relativePath = relativePath
        self.phase = phase
        self.reason = reason
        self.retryable = retryable
    }
}
