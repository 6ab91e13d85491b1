import Foundation

/// Library content a source held and no longer holds, not kept by an exclusion, another source or a live path's
/// edit anchor, with what decides its fate: what reconciliation sorts into trash, quarantine and review. The
/// catalog finds it (in SQL); the engine decides on it.
public struct AbsentContent: Sendable, Equatable {
    public var checksum: Checksum
    /// When its deletion at the source was confirmed, if it was (this run's stamps included).
    public var confirmedAt: Date?
    /// Whether a person approved trashing it.
    public var approved: Bool

    public init(checksum: Checksum, confirmedAt: Date? = nil, approved: Bool = false) {
        self.checksum = checksum
        self.confirmedAt = confirmedAt
        self.approved = approved
    }
}
