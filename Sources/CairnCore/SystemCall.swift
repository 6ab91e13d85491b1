#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

/// The one way cairn makes a libc call that reports its failure through `errno`, and the only file that reads
/// `errno`: each call's failure comes back as swift-system's `Errno` (or a `SystemCallError` naming the call and
/// the file), read right after the call, before anything else can overwrite it.
public enum SystemCall {
    /// Calls `call`, again while it is interrupted (EINTR); its result, or the `Errno` of its failure (a negative
    /// result). Not for `close`, which must not be repeated: `once` calls it once. A result already in hand goes
    /// through `check`.
    @inlinable
    public static func result<T: BinaryInteger>(_ call: () -> T) -> Result<T, Errno> {
        while true {
            let value = call()
            guard value < 0 else { return .success(value) }
            let code = errno
            if code != EINTR { return .failure(Errno(rawValue: code)) }
        }
    }

    /// Calls `call` once, even if interrupted (`close`, which must not be repeated); its result or its failure.
    @inlinable
    public static func once<T: BinaryInteger>(_ call: () -> T) -> Result<T, Errno> {
        let value = call()
        return value < 0 ? .failure(Errno(rawValue: errno)) : .success(value)
    }

    /// For a call that returns nil, or `sentinel` (`mmap`'s MAP_FAILED), on failure (`fdopendir`, `mmap`).
    @inlinable
    public static func pointer<T: Equatable>(failingAs sentinel: T? = nil, _ call: () -> T?) -> Result<T, Errno> {
        if let value = call(), value != sentinel { return .success(value) }
        return .failure(Errno(rawValue: errno))
    }

    /// For a call whose nil is the end of a stream unless it set `errno` (`readdir`).
    @inlinable
    public static func next<T>(_ call: () -> T?) -> Result<T?, Errno> {
        errno = 0
        if let value = call() { return .success(value) }
        return errno == 0 ? .success(nil) : .failure(Errno(rawValue: errno))
    }

    /// A negative `result` of a call just made (`errno` is still its own) as a thrown `SystemCallError`.
    @discardableResult
    @inlinable
    public static func check<T: BinaryInteger>(_ result: T, _ operation: String, _ path: String) throws(SystemCallError) -> T {
        guard result >= 0 else { throw SystemCallError(operation, path: path, code: Errno(rawValue: errno)) }
        return result
    }
}

extension Result where Failure == Errno {
    /// The system's reason for the failure ("No such file or directory"), or "" on success.
    @inlinable
    public var failureReason: String {
        if case .failure(let code) = self { code.description } else { "" }
    }

    /// The value, or the failure as a `SystemCallError` naming `operation` and `path`.
    @discardableResult
    @inlinable
    public func get(_ operation: String, _ path: String) throws(SystemCallError) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let code): throw SystemCallError(operation, path: path, code: code)
        }
    }
}

/// A failed system call on a named file: says which call, which file and the system's reason.
public struct SystemCallError: Error, CustomStringConvertible, Sendable, Equatable {
    public let operation: String
    public let path: String
    public let code: Errno

    public init(_ operation: String, path: String, code: Errno) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    public var reason: String { code.description }
    public var description: String { "\(path): \(operation): \(reason)" }

    /// Interrupted or resource-pressure failures that may pass if tried again.
    public var isTransient: Bool {
        [Errno.interrupted, .resourceTemporarilyUnavailable, .resourceBusy, .noMemory, .tooManyOpenFilesInSystem,
         .tooManyOpenFiles, .ioError, .timedOut].contains(code)
    }
}

/// Writes every byte of `buffer` to `descriptor`: short writes continue, EINTR is retried, and EAGAIN (a
/// non-blocking terminal or pipe that is full) waits until the descriptor takes more. The one write loop of cairn.
public func writeFully(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws(SystemCallError) {
    guard var next = buffer.baseAddress else { return }
    var left = buffer.count
    while left > 0 {
        switch SystemCall.result({ write(descriptor, next, left) }) {
        case .success(let written):
            next += written
            left -= written
        case .failure(.resourceTemporarilyUnavailable):
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, 1000)
        case .failure(let code):
            throw SystemCallError("write", path: path, code: code)
        }
    }
}
