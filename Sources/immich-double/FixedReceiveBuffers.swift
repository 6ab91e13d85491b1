import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 channel with receive buffers of one fixed size.
///
/// NIO reuses a receive buffer once it holds the only reference, and grows it in place when its adaptive allocator
/// asks for more. A request task that read the previous bytes on another thread is then ordered before the growth
/// only through Swift's reference count, which ThreadSanitizer does not see (apple/swift-nio#303): large bodies
/// (the 64 MiB seed of a 100,000-asset library) made it report a race inside NIO on every sanitizer run. A buffer
/// of a fixed size is never grown, so the double is as checkable as the code it serves.
struct FixedReceiveBuffers: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    static let size = 64 << 10

    let base: HTTP1Channel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.setOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Self.size))
            .flatMap { base.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with `FixedReceiveBuffers`.
    static var http1WithFixedReceiveBuffers: HTTPServerBuilder {
        .init { responder in FixedReceiveBuffers(base: HTTP1Channel(responder: responder)) }
    }
}
