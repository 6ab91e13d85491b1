import CairnCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a renderer's text goes: a file descriptor in the product, memory in tests.
public protocol TextSink: Sendable {
    func write(_ text: String)
}

/// Writes to a file descriptor it does not own (stdout by default), retrying short writes and EINTR.
/// Errors are dropped: narration must never stop a run because nobody reads the terminal any more.
public struct FileDescriptorSink: TextSink {
    public let descriptor: Int32

    public init(descriptor: Int32 = STDOUT_FILENO) { self.descriptor = descriptor }

    public func write(_ text: String) { _ = Self.writeAll(text, to: descriptor) }

    /// Writes every byte of `text`; returns the failure as text, or nil.
    static func writeAll(_ text: String, to descriptor: Int32) -> String? {
        var text = text
        return text.withUTF8 { buffer -> String? in
            do throws(SystemCallError) { try writeFully(descriptor, UnsafeRawBufferPointer(buffer), path: "") } catch {
                return error.reason
            }
            return nil
        }
    }
}
