import CairnCore
import Foundation
import SystemPackage

/// Whole-file reads and writes with POSIX calls; failures become ``MediaError``s naming the file.
enum FileIO {
    static func size(of path: String, call: FFmpegCall) throws(MediaError) -> Int {
        var info = stat()
        try check(SystemCall.result { stat(path, &info) }, "stat", call)
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
        let fd = try check(SystemCall.result { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) },
                           "open for writing", call, file: path)
        let written = bytes.withUnsafeBytes { buffer -> SystemCallError? in
            do throws(SystemCallError) { try writeFully(fd, buffer, path: path) } catch { return error }
            return nil
        }
        if let written {
            close(fd)
            throw posixError("write", call, code: written.code, file: path)
        }
        try check(SystemCall.once { close(fd) }, "close", call, file: path)
    }

    /// A system call's result, its failure as a media error about `file` (default: the call's).
    @discardableResult
    static func check<T>(_ result: Result<T, Errno>, _ operation: String, _ call: FFmpegCall,
                         file: String? = nil) throws(MediaError) -> T {
        switch result {
        case .success(let value): return value
        case .failure(let code): throw posixError(operation, call, code: code, file: file)
        }
    }

    static func posixError(_ operation: String, _ call: FFmpegCall, code: Errno, file: String? = nil) -> MediaError {
        let category: MediaError.Category
        switch code {
        case .noSuchFileOrDirectory, .notDirectory, .isDirectory, .permissionDenied, .notPermitted,
             .tooManySymbolicLinkLevels, .fileNameTooLong:
            category = .unreadable
        default: category = .io
        }
        return MediaError(operation: operation, reason: code.description, file: file ?? call.file,
                          category: category, code: -code.rawValue)
    }
}

/// A file opened once for reads at offsets (`pread`), closed when released.
final class FileReader {
    private let descriptor: Int32
    private let call: FFmpegCall

    init(path: String, call: FFmpegCall) throws(MediaError) {
        self.call = call
        descriptor = try FileIO.check(SystemCall.result { open(path, O_RDONLY | O_CLOEXEC) }, "open", call)
    }

    deinit { close(descriptor) }

    /// Up to `count` bytes at `offset` (fewer at the end of the file), read straight into the array's storage: a
    /// whole still read for its embedded movie is held once, not twice.
    func bytes(at offset: Int, count: Int) throws(MediaError) -> [UInt8] {
        var failure: MediaError?
        let bytes = [UInt8](unsafeUninitializedCapacity: max(count, 1)) { buffer, initialized in
            do throws(MediaError) { initialized = try read(into: buffer.baseAddress!, count: count, at: offset) } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Reads up to `count` bytes at `offset` into `buffer`; returns how many were read (fewer at the end of the file).
    func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) throws(MediaError) -> Int {
        var total = 0
        while total < count {
            let got = try FileIO.check(
                SystemCall.result { pread(descriptor, buffer + total, count - total, off_t(offset + total)) }, "read", call)
            if got == 0 { break }
            total += got
        }
        return total
    }
}
