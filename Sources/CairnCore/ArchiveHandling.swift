/// What a run does with the archives (`.zip`, `.tar`, `.tgz`) it finds in its source.
public enum ArchiveHandling: String, Sendable, CaseIterable, Codable {
    /// Archives are ordinary files, never opened (the default: what an archive holds is imported only when asked).
    case ignore
    /// Each archive is walked as a folder of its own name, in place, without unpacking it.
    case read
}
