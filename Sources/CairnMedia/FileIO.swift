import Foundation

/// Whole-file reads and writes with POSIX calls; failures become ``MediaError``s naming the file.
enum FileIO {
    static func size(of path: String, call: FFmpegCall) throws(MediaError) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { throw posixError("stat", call) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw call.failure("stat", "not a regular file", .unreadable)
        }
        return Int(info.st_size)
    }

    /// Reads up to `count` bytes from the start of `path` into `buffer`; returns how many were read.
    static func read(_ path: String, into buffer: UnsafeMutableRawPointer, count: Int, call: FFmpegCall) throws(MediaError) -> Int {
        try FileReader(path: path, call: call).read(into: buffer, count: count, at: 0)
    }

    /// The first `limit` bytes of `path` (fewer when the file is shorter).
    static func prefix(_ path: String, limit: Int, call: FFmpegCall) throws(MediaError) -> [UInt8] {
        try FileReader(path: path, call: call).bytes(at: 0, count: limit)
    }

    /// Writes `bytes` to `path` (created or truncated) and closes it, checking every step.
    static func write(_ bytes: [UInt8], to path: String, call: FFmpegCall) throws(MediaError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw posixError("open for writing", call, file: path) }
        var written = 0
        while written < bytes.count {
            let put = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if put < 0 {
                if errno == EINTR { continue }
                let error = posixError("write", call, file: path)
                close(fd)
                throw error
            }
            written += put
        }
        guard close(fd) == 0 else { throw posixError("close", call, file: path) }
    }

    static func posixError(_ operation: String, _ call: FFmpegCall, file: String? = nil) -> MediaError {
        let code = errno
        let category: MediaError.Category
        switch code {
        case ENOENT, ENOTDIR, EISDIR, EACCES, EPERM, ELOOP, ENAMETOOLONG: category = .unreadable
        default: category = .io
        }
        return MediaError(operation: operation, reason: String(cString: strerror(code)), file: file ?? call.file,
                          category: category, code: -code)
    }
}

/// A file opened once for reads at offsets (`pread`), closed when released.
final class FileReader {
    private let descriptor: Int32
    private let call: FFmpegCall

    init(path: String, call: FFmpegCall) throws(MediaError) {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        self.call = call
        guard descriptor >= 0 else { throw FileIO.posixError("open", call) }
    }

    deinit { close(descriptor) }

    /// Up to `count` bytes at `offset` (fewer at the end of the file).
    func bytes(at offset: Int, count: Int) throws(MediaError) -> [UInt8] {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        defer { buffer.deallocate() }
        let read = try read(into: buffer, count: count, at: offset)
        return Array(UnsafeRawBufferPointer(start: buffer, count: read))
    }

    /// Reads up to `count` bytes at `offset` into `buffer`; returns how many were read (fewer at the end of the file).
    func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) throws(MediaError) -> Int {
        var total = 0
        while total < count {
            let got = pread(descriptor, buffer + total, count - total, off_t(offset + total))
            if got < 0 {
                if errno == EINTR { continue }
                throw FileIO.posixError("read", call)
            }
            if got == 0 { break }
            total += got
        }
        return total
    }
}
