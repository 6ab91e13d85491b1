/// The phases of a run, in the order a run passes through them.
public enum SyncPhase: String, Codable, Sendable, CaseIterable {
    case idle
    case preparing
    case hashing
    case reconciling
    case importing
    case finalizing
}
