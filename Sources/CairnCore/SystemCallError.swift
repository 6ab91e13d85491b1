#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call on a named file: says which call, which file and the system's reason.
public struct SystemCallError: Error, CustomStringConvertible, Sendable, Equatable {
    public let operation: String
    public let path: String
    public let code: Int32

    public init(_ operation: String, path: String, code: Int32 = errno) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    public var reason: String { String(cString: strerror(code)) }
    public var description: String { "\(path): \(operation): \(reason)" }

    /// Interrupted or resource-pressure failures that may pass if tried again.
    public var isTransient: Bool {
        [EINTR, EAGAIN, EBUSY, ENOMEM, ENFILE, EMFILE, EIO, ETIMEDOUT].contains(code)
    }
}

/// The funnel libc return codes go through: a negative result throws the call's `SystemCallError` (with `errno`),
/// any other is returned.
@discardableResult
public func checkSystemCall(_ result: Int32, _ operation: String, _ path: String) throws(SystemCallError) -> Int32 {
    guard result >= 0 else { throw SystemCallError(operation, path: path, code: errno) }
    return result
}

/// Writes every byte of `buffer` to `descriptor`: short writes continue, EINTR is retried, and EAGAIN (a
/// non-blocking terminal or pipe that is full) waits until the descriptor takes more. The one write loop of cairn.
public func writeFully(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws(SystemCallError) {
    guard var next = buffer.baseAddress else { return }
    var left = buffer.count
    while left > 0 {
        let written = write(descriptor, next, left)
        if written < 0 {
            if errno == EINTR { continue }
            if errno == EAGAIN {
                var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, 1000)
                continue
            }
            throw SystemCallError("write", path: path)
        }
        next += written
        left -= written
    }
}
