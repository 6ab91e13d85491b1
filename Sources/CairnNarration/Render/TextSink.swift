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
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN {
                        var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&poller, 1, 1000)
                        continue
                    }
                    return String(cString: strerror(errno))
                }
                offset += written
            }
            return nil
        }
    }
}

/// Collects text in memory.
public final class InMemoryTextSink: TextSink {
    private let buffer = Locked("")

    public init() {}

    public func write(_ text: String) { buffer.withLock { $0 += text } }

    public var text: String { buffer.withLock { $0 } }
    public var lines: [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
}
