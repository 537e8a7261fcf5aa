import CoreMetrics
import Foundation
import HeraldMQTT
import HeraldStore
import Logging
import NIOCore

/// One device connection: decodes nothing itself (the pipeline's MQTT codec does), feeds
/// packets and Herald's deliveries to ``MQTTSessionStateMachine`` and carries out its
/// actions. Lives on its channel's event loop.
final class MQTTConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = MQTTPacket
    typealias OutboundIn = Never
    typealias OutboundOut = MQTTPacket

    private enum WaiterKey: Hashable {
        case seq(Int64)
        case token(UInt64)
    }

    private let context: GatewayContext
    private var machine: MQTTSessionStateMachine
    private var channel: (any Channel)?
    private var device: GatewayDevice?
    private var logger: Logger
    private var waiters: [WaiterKey: (promise: EventLoopPromise<DeliveryOutcome>, timeout: Scheduled<Void>)] = [:]
    /// The silence after which the connection is closed: the CONNECT timeout, then the keepalive.
    private var silenceLimit: Duration
    private var lastHeard: NIODeadline = .now()
    private var unwritableSince: NIODeadline?

    init(context: GatewayContext) {
        self.context = context
        self.machine = MQTTSessionStateMachine(maxInFlight: context.configuration.maxInFlight, maxQueued: context.configuration.maxQueued)
        self.silenceLimit = context.configuration.connectTimeout
        self.logger = context.logger
    }

    // MARK: Channel events

    func handlerAdded(context channelContext: ChannelHandlerContext) {
        channel = channelContext.channel
        lastHeard = .now()
        context.sweeper(for: channelContext.eventLoop).add(self)
        logger[metadataKey: "herald.connection"] = "\(channelContext.channel.remoteAddress?.description ?? "?")"
    }

    func channelInactive(context channelContext: ChannelHandlerContext) {
        if machine.isOpen { perform(machine.close(.clientDisconnected), channelContext) }
        finish(channelContext)
        channelContext.fireChannelInactive()
    }

    func channelRead(context channelContext: ChannelHandlerContext, data: NIOAny) {
        lastHeard = .now()
        perform(machine.packetReceived(unwrapInboundIn(data)), channelContext)
    }

    func errorCaught(context channelContext: ChannelHandlerContext, error: any Error) {
        guard machine.isOpen else { return }
        if let error = error as? MQTTProtocolError, case .awaitingConnect = machine.state, let code = error.connAckReturnCode {
            _ = machine.close(.protocolViolation)
            perform(.sendAndClose(.connAck(.init(returnCode: code)), .protocolViolation), channelContext)
            return
        }
        logger.debug("closing connection", metadata: ["error": "\(error)"])
        perform(machine.close(.protocolViolation), channelContext)
    }

    func channelWritabilityChanged(context channelContext: ChannelHandlerContext) {
        if channelContext.channel.isWritable {
            unwritableSince = nil
            perform(machine.resume(), channelContext)
        } else if unwritableSince == nil {
            unwritableSince = .now()
        }
        channelContext.fireChannelWritabilityChanged()
    }

    // MARK: Herald events (on the event loop)

    func deliver(_ message: Outgoing, promise: EventLoopPromise<DeliveryOutcome>, timeout: Duration) {
        guard let channel, machine.registrationID != nil else {
            promise.succeed(.notConnected)
            return
        }
        let key: WaiterKey = message.seq.map { .seq($0) } ?? .token(message.token)
        let bound = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let scheduled: Scheduled<Void> = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            if let waiter = bound.value.waiters.removeValue(forKey: key) {
                waiter.promise.succeed(DeliveryOutcome.noAcknowledgement)
            }
        }
        if let previous = waiters.updateValue((promise, scheduled), forKey: key) {
            previous.timeout.cancel()
            previous.promise.succeed(.noAcknowledgement)
        }
        context.metrics.deliveries.increment()
        perform(machine.deliver(message), nil)
    }

    /// Another connection for the same device took over.
    func takenOver() {
        perform(machine.close(.takenOver), nil)
    }

    func shutdown() {
        perform(machine.close(.serverShutdown), nil)
    }

    /// Called about once a second by the loop's sweeper.
    func sweep(now: NIODeadline) {
        guard machine.isOpen else { return }
        if now - lastHeard > TimeAmount(silenceLimit) {
            let reason: MQTTSessionStateMachine.CloseReason = machine.registrationID == nil ? .connectTimeout : .keepaliveExpired
            perform(machine.close(reason), nil)
        } else if let since = unwritableSince,
            now - since > TimeAmount(context.configuration.slowConsumerTimeout)
        {
            perform(machine.close(.slowConsumer), nil)
        }
    }

    // MARK: Actions

    private func perform(_ action: MQTTSessionStateMachine.Action, _ channelContext: ChannelHandlerContext?) {
        guard let channel else { return }
        switch action {
        case .none:
            break
        case .authenticate(let clientID, let username, let password, let keepAlive):
            silenceLimit = context.configuration.keepAliveDeadline(clientKeepAlive: keepAlive)
            authenticate(clientID: clientID, username: username, password: password, channel: channel)
        case .acceptSession(let registrationID):
            startSession(registrationID, channel: channel)
        case .loadInbox(let packets):
            if !packets.isEmpty { perform(.send(packets), channelContext) }
            loadInbox(channel: channel)
        case .send(let packets):
            for packet in packets { channel.write(packet, promise: nil) }
            channel.flush()
        case .sendAndClose(let packet, let reason):
            channel.writeAndFlush(packet).whenComplete { _ in channel.close(promise: nil) }
            recordClose(reason)
        case .close(let reason):
            channel.close(promise: nil)
            recordClose(reason)
        case .acknowledged(let outgoing, let ackedThrough, let next):
            context.metrics.acknowledgements.increment()
            resolveWaiter(for: outgoing)
            if let ackedThrough, let device { context.acks.acknowledged(deviceID: device.deviceID, through: ackedThrough) }
            for packet in next { channel.write(packet, promise: nil) }
            if !next.isEmpty { channel.flush() }
        case .alreadyAcknowledged(let outgoing):
            resolveWaiter(for: outgoing)
        case .deviceEvent(let payload, let reply):
            context.metrics.deviceEvents.increment()
            if let device { context.onDeviceEvent(device, payload) }
            if let reply { channel.writeAndFlush(reply, promise: nil) }
        }
    }

    /// Tells whoever waits for this message that the device acknowledged it.
    private func resolveWaiter(for outgoing: Outgoing) {
        let key: WaiterKey = outgoing.seq.map { .seq($0) } ?? .token(outgoing.token)
        if let waiter = waiters.removeValue(forKey: key) {
            waiter.timeout.cancel()
            waiter.promise.succeed(.acknowledged)
        }
    }

    private func authenticate(clientID: String, username: String, password: String, channel: any Channel) {
        let authenticator = context.authenticator
        let handler = NIOLoopBound(self, eventLoop: channel.eventLoop)
        Task {
            let result = await authenticator.authenticate(clientID: clientID, username: username, password: password)
            channel.eventLoop.execute {
                let handler = handler.value
                switch result {
                case .accepted(let device): handler.device = device
                case .refused: handler.context.metrics.authFailures.increment()
                }
                handler.perform(handler.machine.authenticated(result), nil)
            }
        }
    }

    private func startSession(_ registrationID: String, channel: any Channel) {
        guard let device else { return }
        logger[metadataKey: "herald.registration_id"] = "\(registrationID)"
        channel.writeAndFlush(MQTTPacket.connAck(.init(returnCode: .accepted)), promise: nil)
        context.metrics.connects.increment()
        context.metrics.connections.record(context.registry.count + 1)
        let handle = ConnectionHandle(
            id: ObjectIdentifier(self),
            deviceID: device.deviceID,
            eventLoop: channel.eventLoop,
            handler: NIOLoopBound(self, eventLoop: channel.eventLoop)
        )
        if let previous = context.registry.register(registrationID, handle) {
            previous.eventLoop.execute { previous.handler.value.takenOver() }
        }
        context.acks.connected(deviceID: device.deviceID)
        loadInbox(channel: channel)
    }

    /// Loads the device's unacknowledged messages and hands them to the session. A load
    /// that fails closes the connection: the device reconnects and its replay loads again.
    private func loadInbox(channel: any Channel) {
        guard let device else { return }
        let store = context.store
        let acks = context.acks
        let handler = NIOLoopBound(self, eventLoop: channel.eventLoop)
        Task {
            let snapshot = try? await store.pendingInbox(deviceID: device.deviceID)
            let acked = acks.pendingAcknowledgement(deviceID: device.deviceID) ?? 0
            let replay = (snapshot?.messages ?? []).filter { $0.seq > acked }.map {
                Outgoing(seq: $0.seq, messageID: $0.messageID, payload: ByteBuffer(bytes: $0.payload), dup: true, token: 0)
            }
            channel.eventLoop.execute {
                let handler = handler.value
                guard let snapshot else {
                    handler.perform(handler.machine.close(.storeUnavailable), nil)
                    return
                }
                handler.context.metrics.replays.increment(by: replay.count)
                handler.perform(handler.machine.replayLoaded(replay, through: snapshot.through), nil)
            }
        }
    }

    private func recordClose(_ reason: MQTTSessionStateMachine.CloseReason) {
        context.metrics.disconnected(reason)
        logger.debug("connection closed", metadata: ["herald.reason": "\(reason.rawValue)"])
    }

    private func finish(_ channelContext: ChannelHandlerContext) {
        context.sweeper(for: channelContext.eventLoop).remove(self)
        if let device {
            context.registry.remove(device.registrationID, id: ObjectIdentifier(self))
            // After a takeover the device is still connected, through the new connection.
            if context.registry.connection(device.registrationID) == nil {
                context.acks.disconnected(deviceID: device.deviceID)
            }
        }
        for (_, waiter) in waiters {
            waiter.timeout.cancel()
            waiter.promise.succeed(.noAcknowledgement)
        }
        waiters = [:]
        context.metrics.connections.record(context.registry.count)
    }
}
