import CairnCore
import CairnNarration

/// Collects text in memory.
public final class InMemoryTextSink: TextSink {
    private let buffer = Locked("")

    public init() {}

    public func write(_ text: String) { buffer.withLock { $0 += text } }

    public var text: String { buffer.withLock { $0 } }
    public var lines: [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
}
