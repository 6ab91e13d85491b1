/// What a source file is, for import purposes.
public enum MediaKind: String, Codable, Sendable, CaseIterable {
    case photo
    case video
    /// Not media: counted and skipped, never imported.
    case other
}
