import NIOCore

/// Connections of one event loop with writes not yet flushed. They are flushed together in
/// a task queued behind the work the loop already has, so messages that reach a connection
/// in the same turn (the copies of several broadcasts, a PUBACK's next messages) leave in
/// one write instead of one system call each.
final class LoopFlushes {
    private let eventLoop: any EventLoop
    private var pending: [MQTTConnectionHandler] = []

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Flushes `handler` soon; call once until it is flushed.
    func add(_ handler: MQTTConnectionHandler) {
        pending.append(handler)
        if pending.count == 1 {
            eventLoop.assumeIsolated().execute { self.flushAll() }
        }
    }

    private func flushAll() {
        let handlers = pending
        pending = []
        for handler in handlers { handler.flushNow() }
    }
}
