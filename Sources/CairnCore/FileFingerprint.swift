#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

extension FileFingerprint {
    /// The fingerprint of a `stat` result; `package`, so the C struct stays out of the public API.
    package init(_ info: stat) {
        self.init(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modificationTimeNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }
}
