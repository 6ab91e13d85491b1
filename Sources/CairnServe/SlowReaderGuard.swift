import NIOCore

/// Closes a connection whose client has stopped taking what is written to it.
///
/// A channel turns unwritable once what waits for the socket passes its high watermark; the stream's writer then
/// waits (the async writer's back-pressure), so a client that reads slowly lags behind in the run log, not in this
/// process's memory. One that stays unwritable for `limit` (a client that never reads, or whose link is gone
/// without a reset) is closed, which ends the response's pending write; a browser reconnects with `Last-Event-ID`
/// and resumes where it stood. Placed on every connection: a page or thumbnail is as bounded by it as `/events`.
final class SlowReaderGuard: ChannelInboundHandler, RemovableChannelHandler {
    /// Only passed on: the guard watches writability, never the data.
    typealias InboundIn = NIOAny

    private let limit: TimeAmount
    private let onDrop: @Sendable () -> Void
    private var closing: Scheduled<Void>?

    init(limit: TimeAmount, onDrop: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.onDrop = onDrop
    }

    /// The kernel's send buffer for one connection, fixed rather than grown by autotuning (up to `tcp_wmem`'s 4 MiB
    /// by default): a page's stream never needs more, fifty clients hold little kernel memory, and one that stops
    /// reading turns the channel unwritable within that much of the run.
    static let sendBufferBytes = 256 * 1024

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { limitSendBuffer(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        limitSendBuffer(context)
        context.fireChannelActive()
    }

    private func limitSendBuffer(_ context: ChannelHandlerContext) {
        // A socket that refuses the size keeps the kernel's default: the guard still closes it on writability.
        _ = context.channel.setOption(ChannelOptions.socketOption(.so_sndbuf), value: Self.sendBufferBytes)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            closing?.cancel()
            closing = nil
        } else if closing == nil {
            let onDrop = onDrop
            closing = context.eventLoop.assumeIsolated().scheduleTask(in: limit) {
                onDrop()
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing?.cancel()
        closing = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        closing?.cancel()
        closing = nil
    }
}
