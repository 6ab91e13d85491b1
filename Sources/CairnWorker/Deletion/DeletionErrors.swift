import CairnCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one funnel every libc return code of the deletion code goes through.
@discardableResult
func check(_ result: Int32, _ operation: String, _ path: String) throws -> Int32 {
    guard result >= 0 else { throw SystemCallError(operation, path: path, code: errno) }
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
