/// How much evidence a deletion needs before cairn trashes it in the library.
public enum DeletionStrictness: String, Codable, Sendable, CaseIterable {
    /// Confirmed deletions trash once their quarantine ends; unconfirmed ones (observed, now absent,
    /// but never seen disappearing) trash too. Quarantine is the safety window.
    case trusting
    /// Confirmed deletions trash once their quarantine ends; unconfirmed ones always wait for review.
    case strict
}
