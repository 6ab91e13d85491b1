/// The stat facts that say whether a file may have changed since it was hashed.
///
/// When all five match a cached entry the cached checksum is reused without reading the file.
public struct FileFingerprint: Hashable, Codable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// Modification time in nanoseconds since the epoch.
    public var modificationTimeNanoseconds: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, modificationTimeNanoseconds: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modificationTimeNanoseconds = modificationTimeNanoseconds
    }
}
