#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed POSIX call: the path, the call, and the system's reason, in one line.
public struct FileSystemError: Error, Equatable, CustomStringConvertible {
    public let operation: String
    public let path: String
    public let code: Int32

    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    public var description: String {
        "\(path): \(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}

/// The one funnel every libc return code of the deletion code goes through.
@discardableResult
func check(_ result: Int32, _ operation: String, _ path: String) throws -> Int32 {
    guard result >= 0 else { throw FileSystemError(operation: operation, path: path, code: errno) }
    return result
}

/// A refusal that is not a system error: the request itself is unsafe or malformed.
public struct DeletionError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let reason: String

    public init(_ path: String, _ reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}
