/// The phases of a run, in the order a run passes through them.
///
/// `fetchingServer` is a concurrent track: it may overlap the phases around it.
public enum SyncPhase: String, Codable, Sendable, CaseIterable {
    case idle
    case preparing
    case fetchingServer
    case hashing
    case reconciling
    case importing
    case finalizing
}
