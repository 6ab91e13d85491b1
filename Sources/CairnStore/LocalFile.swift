#if canImport(Glibc)
import Glibc
#endif
import CairnCore

/// A local file's bytes by range: the one read loop of the stores (the folder store's reads, the S3 store's bodies).
public enum LocalFile {
    /// The bytes of `path` in `range` (all of it when nil), cut at the file's end: fewer than asked when the file is
    /// shorter, or shrank while it was read.
    public static func read(_ path: String, range: Range<Int64>?) throws(SystemCallError) -> [UInt8] {
        let descriptor = try SystemCall.result { open(path, O_RDONLY | O_CLOEXEC) }.get("open", path)
        defer { _ = SystemCall.once { close(descriptor) } }
        var status = stat()
        try SystemCall.check(fstat(descriptor, &status), "fstat", path)
        let size = Int64(status.st_size)
        let wanted = range.map { min($0.lowerBound, size) ..< min($0.upperBound, size) } ?? 0 ..< size
        var bytes = [UInt8](repeating: 0, count: Int(wanted.count))
        var done = 0
        while done < bytes.count {
            let count = try bytes.withUnsafeMutableBytes { buffer in
                SystemCall.result {
                    pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(wanted.lowerBound) + off_t(done))
                }
            }.get("read", path)
            if count == 0 { break }
            done += count
        }
        return done == bytes.count ? bytes : Array(bytes.prefix(done))
    }

    /// The size of the file at `path`.
    public static func size(_ path: String) throws(SystemCallError) -> Int64 {
        var status = stat()
        try SystemCall.result { stat(path, &status) }.get("stat", path)
        return Int64(status.st_size)
    }
}
