import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose next request head does not arrive in time: counted from
/// the connection's start, and from the end of each response on a kept-alive connection.
/// A client trickling header bytes (slowloris) resets an idle timer but not this one, so
/// it cannot hold a connection for ever. A request whose head has arrived is not timed
/// (a big upload may take as long as it needs).
final class RequestHeadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let deadline: ConnectionDeadline

    init(timeout: TimeAmount) {
        deadline = ConnectionDeadline(timeout: timeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { deadline.arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        deadline.arm(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { deadline.disarm() }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { deadline.arm(context) }
        context.write(data, promise: promise)
    }

    /// Also called when the connection closes and its pipeline is torn down.
    func handlerRemoved(context: ChannelHandlerContext) {
        deadline.cancel()
    }
}

/// A connection's close, `timeout` from when it was last armed, unless disarmed meanwhile.
/// Re-arming moves the moment without touching the event loop's timers: one check is
/// scheduled at a time, and when it runs early (the deadline moved on) it schedules itself
/// for the new moment. So a kept-alive connection's responses cost a clock reading each,
/// not a timer cancelled and another scheduled. Used on its channel's event loop only.
final class ConnectionDeadline {
    let timeout: TimeAmount
    /// When the connection closes; nil while disarmed.
    private var due: NIODeadline?
    private var scheduled: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func arm(_ context: ChannelHandlerContext) {
        let due = NIODeadline.now() + timeout
        self.due = due
        if scheduled == nil { schedule(context, at: due) }
    }

    func disarm() {
        due = nil
    }

    /// Disarms it and drops the pending check (the handler leaves the pipeline).
    func cancel() {
        due = nil
        scheduled?.cancel()
        scheduled = nil
    }

    private func schedule(_ context: ChannelHandlerContext, at moment: NIODeadline) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        scheduled = context.eventLoop.scheduleTask(deadline: moment) {
            let (deadline, context) = bound.value
            deadline.check(context)
        }
    }

    private func check(_ context: ChannelHandlerContext) {
        scheduled = nil
        guard let due else { return }  // disarmed: the next arm schedules a check again
        if due <= .now() {
            context.close(promise: nil)
        } else {
            schedule(context, at: due)
        }
    }
}

/// Times a connection's first request head on the raw bytes. With the WebSocket upgrade
/// the HTTP handlers (`RequestHeadTimeoutHandler` and the idle timer among them) join the
/// pipeline only once the first head has been parsed, so until then this handler, first
/// in the pipeline, holds the deadline: the head ends at the first blank line after
/// something other than blank lines. Then it steps aside.
final class FirstRequestHeadTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let deadline: ConnectionDeadline
    private var begun = false
    /// The last four bytes seen, newest in the lowest byte.
    private var recent: UInt32 = 0

    init(timeout: TimeAmount) {
        deadline = ConnectionDeadline(timeout: timeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { deadline.arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        deadline.arm(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var complete = false
        for byte in unwrapInboundIn(data).readableBytesView {
            recent = recent << 8 | UInt32(byte)
            if !begun {
                begun = byte != UInt8(ascii: "\r") && byte != UInt8(ascii: "\n")
            } else if recent == 0x0D0A_0D0A {
                complete = true
                break
            }
        }
        context.fireChannelRead(data)
        if complete {
            deadline.disarm()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline.cancel()
    }
}

/// A server child channel with `FirstRequestHeadTimeoutHandler` in front of `base`'s pipeline.
struct FirstRequestHeadTimeout<Base: ServerChildChannel>: ServerChildChannel {
    let base: Base
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(FirstRequestHeadTimeoutHandler(timeout: timeout))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with the WebSocket upgrade (`webSocketRouter`), every request head timed
    /// (the first one by `FirstRequestHeadTimeoutHandler`, later ones on a kept-alive
    /// connection by `RequestHeadTimeoutHandler`).
    static func http1WebSocketUpgrade<Router: HTTPResponderBuilder & SendableMetatype>(
        webSocketRouter: Router,
        configuration: HTTP1WebSocketUpgradeChannel.Configuration,
        headTimeout: TimeAmount
    ) -> HTTPServerBuilder where Router.Responder.Context: WebSocketRequestContext {
        let webSocketResponder = webSocketRouter.buildResponder()
        return .init { responder in
            FirstRequestHeadTimeout(
                base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                timeout: headTimeout
            )
        }
    }
}
