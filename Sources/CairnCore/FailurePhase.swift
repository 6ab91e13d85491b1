/// Where a file failed in a run: the walk, hashing, one of the import lanes, or linking its sidecar. Stored in the
/// catalog and written in `--report` lines by its raw value.
public enum FailurePhase: String, Codable, Sendable, CaseIterable {
    case scanning, hashing, transfer, metadata, thumbnail, synthesis, sidecar
}
