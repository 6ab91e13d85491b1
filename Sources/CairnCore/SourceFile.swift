/// One file of a source, from the walk to planning: where it is below the root, the stat facts it was seen with,
/// what kind of media it is and, once hashed (or taken from the snapshot), its checksum. The walk finds it, the
/// run tables and the source's snapshot keep it, hashing fills in the checksum, and planning makes an
/// `ImportItem` of it.
public struct SourceFile: Sendable, Hashable {
    /// Path below the source root, `/`-separated, never starting with `/` or containing `..`.
    public var relativePath: String
    public var fingerprint: FileFingerprint
    /// The SHA1 of its bytes; nil until hashed, or when the snapshot's is stale.
    public var checksum: Checksum?
    public var kind: MediaKind

    public init(relativePath: String, fingerprint: FileFingerprint, checksum: Checksum? = nil, kind: MediaKind) {
        self.relativePath = relativePath
        self.fingerprint = fingerprint
        self.checksum = checksum
        self.kind = kind
    }
}
