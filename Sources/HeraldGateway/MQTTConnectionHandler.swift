import CoreMetrics
import Foundation
import HeraldMQTT
import HeraldStore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// One device connection: decodes its packets, feeds them and Herald's deliveries to
/// ``MQTTSessionStateMachine`` and carries out its actions. Lives on its channel's event
/// loop.
///
/// It is the connection's only handler (after TLS, if any) and codes MQTT itself rather
/// than behind a `ByteToMessageHandler` and a `MessageToByteHandler`: an idle connection
/// then holds no codec buffers and no extra pipeline contexts.
final class MQTTConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let context: GatewayContext
    /// The connection's id in the registry, the same once it is parked and brought back.
    let connectionID: UInt64
    /// Whether the connection may be parked (plaintext: TLS state can't leave its channel).
    let parkable: Bool
    var machine: MQTTSessionStateMachine
    private(set) var reader: MQTTPacketReader
    private let encoder = MQTTPacketEncoder()
    /// Set while the handler is in the pipeline.
    var channelContext: ChannelHandlerContext?
    /// This connection's event loop's sweeper: its acknowledgement deadlines and its
    /// round of flushes (one reference, not one per loop-wide table: memory per idle
    /// connection is measured).
    var sweeper: LoopSweeper?
    private(set) var flushPending = false
    /// Set once the connection is parked (``park()``): the handler is done with, and
    /// whoever still holds it is led to the connection by its ticket.
    var parkedAs: ParkingLot.Ticket?
    /// The channel is closing for the connection to be parked, not the connection.
    var parking = false
    /// The descriptor of the channel's socket when Herald gave it to the channel (a
    /// connection brought back from the lot), else -1: read from NIO when it parks.
    var descriptor: Int32 = -1
    /// Actions of a connection brought back from the lot that wait for its channel to be
    /// active; nil once it is (and for every other connection).
    var awaitingChannel: [MQTTSessionStateMachine.Action]?
    var device: DeviceIdentity?
    /// The epoch of the device's session in the cluster, once this connection claimed it
    /// (before its first inbox load).
    var epoch: Int64?
    /// This connection's own claim is under way (it may already hold an epoch handed to it
    /// by the connection it replaced, ``adopt(epoch:)``, older than its claim will be).
    var claiming = false
    /// The newest epoch another node told of while this connection's claim was under way:
    /// if it is above what the connection holds once the claim is in, it closes then.
    var claimedElsewhere: Int64 = 0
    /// The replay carries DUP on every seq up to this one: an earlier connection may have
    /// sent them without a record (``SessionClaim/earlierMayHaveSent``).
    var replayDUPThrough: Int64 = 0
    /// The "sent through" last handed to the ack recorder.
    private var recordedSent: Int64 = 0
    /// Deliveries whose outcome someone waits for, each with its deadline's ticket.
    private(set) var waits = AckWaits<OutcomeReceiver>()
    /// The CONNECT timeout, the keepalive, the credentials check's time limit and the
    /// slow-consumer rule, told the time by this handler (``NIODeadline/now()``) and asked
    /// by ``sweep(now:)``.
    var timers: ConnectionTimers
    /// The credentials check under way (it has ``GatewayConfiguration/authTimeout``).
    var authentication: CancellationSignal?

    init(context: GatewayContext, parkable: Bool) {
        self.context = context
        self.connectionID = context.nextConnectionID()
        self.parkable = parkable
        self.machine = MQTTSessionStateMachine(maxInFlight: context.configuration.maxInFlight, maxQueued: context.configuration.maxQueued)
        self.reader = MQTTPacketReader(maximumPacketSize: context.configuration.maxPacketSize)
        self.timers = ConnectionTimers(openedAt: .now(), configuration: context.configuration)
    }

    /// The handler of a parked connection brought back, on `sweeper`'s loop, before its
    /// channel is made: its session as it was parked.
    init(context: GatewayContext, resuming record: ParkedConnection, sweeper: LoopSweeper) {
        let registrationID = record.key.string
        self.context = context
        self.connectionID = record.connectionID
        self.parkable = true
        self.machine = MQTTSessionStateMachine(
            resuming: record.session,
            registrationID: registrationID,
            maxInFlight: context.configuration.maxInFlight,
            maxQueued: context.configuration.maxQueued
        )
        self.reader = MQTTPacketReader(maximumPacketSize: context.configuration.maxPacketSize)
        self.timers = ConnectionTimers(silenceLimit: record.keepalive.silenceLimit, lastHeard: record.keepalive.lastHeard)
        self.device = DeviceIdentity(deviceID: record.deviceID, appID: record.appID, registrationID: registrationID)
        self.epoch = record.epoch
        self.replayDUPThrough = record.replayDUPThrough
        self.recordedSent = record.session.sentThrough
        self.descriptor = record.fd
        self.sweeper = sweeper
        self.awaitingChannel = []
        sweeper.add(self)
    }

    // MARK: Channel events

    func handlerAdded(context channelContext: ChannelHandlerContext) {
        self.channelContext = channelContext
        guard sweeper == nil else { return }
        timers = ConnectionTimers(openedAt: .now(), configuration: context.configuration)
        let sweeper = context.sweeper(for: channelContext.eventLoop)
        sweeper.add(self)
        self.sweeper = sweeper
    }

    func handlerRemoved(context channelContext: ChannelHandlerContext) {
        // A parked connection's handler leaves its old pipeline after the fact.
        guard self.channelContext === channelContext else { return }
        self.channelContext = nil
        sweeper = nil
    }

    func channelActive(context channelContext: ChannelHandlerContext) {
        if let actions = awaitingChannel {
            awaitingChannel = nil
            for action in actions { perform(action) }
        }
        channelContext.fireChannelActive()
    }

    func channelInactive(context channelContext: ChannelHandlerContext) {
        if parking {
            // Its socket is the lot's now: the connection goes on without this channel.
            parking = false
        } else {
            if machine.isOpen { perform(machine.close(.clientDisconnected)) }
            finish()
        }
        channelContext.fireChannelInactive()
    }

    func channelRead(context channelContext: ChannelHandlerContext, data: NIOAny) {
        let now = NIODeadline.now()
        timers.heard(at: now)
        reader.append(unwrapInboundIn(data))
        do {
            while machine.isOpen, let packet = try reader.next() {
                if packet != .pingReq { timers.active(at: now) }
                perform(machine.packetReceived(packet))
            }
        } catch {
            malformed(error)
        }
    }

    func errorCaught(context channelContext: ChannelHandlerContext, error: any Error) {
        guard machine.isOpen else { return }
        logger.debug("closing connection", metadata: metadata(["error": "\(error)"]))
        perform(machine.close(.protocolViolation))
    }

    /// Bytes that are not MQTT close the connection; a CONNECT of another protocol version
    /// is answered with its CONNACK code first, as the specification asks.
    private func malformed(_ error: MQTTProtocolError) {
        guard machine.isOpen else { return }
        if case .awaitingConnect = machine.state, let code = error.connAckReturnCode {
            _ = machine.close(.protocolViolation)
            perform(.sendAndClose(.connAck(.init(returnCode: code)), .protocolViolation))
            return
        }
        logger.debug("closing connection", metadata: metadata(["error": "\(error)"]))
        perform(machine.close(.protocolViolation))
    }

    func channelWritabilityChanged(context channelContext: ChannelHandlerContext) {
        if channelContext.channel.isWritable {
            timers.becameWritable()
            perform(machine.resume())
        } else {
            timers.becameUnwritable(at: .now())
        }
        channelContext.fireChannelWritabilityChanged()
    }

    // MARK: Herald events (on the event loop)

    /// Sends `message`; `receiver` learns whether it was acknowledged within `timeout`.
    func deliver(_ message: Outgoing, to receiver: OutcomeReceiver, timeout: Duration) {
        guard let deadlines = sweeper?.deadlines.value, machine.registrationID != nil else {
            receiver.resolve(.notConnected)
            return
        }
        let key = DeliveryKey(message)
        let ticket = deadlines.add(.now() + TimeAmount(timeout), for: self, key: key)
        waits.wait(for: key, receiver, ticket: ticket)?.resolve(.noAcknowledgement)
        context.metrics.deliveries.increment()
        perform(machine.deliver(message))
    }

    /// The deadline of a delivery's wait passed (``AckDeadlines``).
    func ackDeadlinePassed(_ key: DeliveryKey, ticket: UInt64) {
        waits.deadlinePassed(key, ticket: ticket)?.resolve(.noAcknowledgement)
    }

    /// Whether the wait with this ticket is still open.
    func awaitsAcknowledgement(of key: DeliveryKey, ticket: UInt64) -> Bool {
        waits.awaits(key, ticket: ticket)
    }

    /// Another connection for the same device took over.
    func takenOver() {
        perform(machine.close(.takenOver))
    }

    /// Messages were stored in the device's inbox by another node.
    func inboxChanged() {
        perform(machine.storeChanged())
    }

    /// Not closed yet (nor closing).
    var isOpen: Bool { machine.isOpen }

    func shutdown() {
        perform(machine.close(.serverShutdown))
    }

    /// Called about once a second by the loop's sweeper.
    func sweep(now: NIODeadline) {
        guard machine.isOpen else { return }
        switch timers.expired(at: now, sessionAccepted: machine.registrationID != nil, configuration: context.configuration) {
        case nil:
            parkIfIdle(now: now)
        case .authenticationTimedOut:
            // The database doesn't answer (an outage): the device hears so now and retries.
            authentication?.cancel()
            authenticationEnded(.refused(.serverUnavailable), clientID: "", address: nil)
        case .close(let reason):
            perform(machine.close(reason))
        }
    }

    // MARK: Actions

    func perform(_ action: MQTTSessionStateMachine.Action) {
        if awaitingChannel != nil {
            if action != .none { awaitingChannel?.append(action) }
            return
        }
        guard let channelContext else { return }
        switch action {
        case .none:
            break
        case .authenticate(let clientID, let username, let password, let keepAlive):
            timers.connectReceived(keepAlive: keepAlive, configuration: context.configuration)
            authenticate(clientID: clientID, username: username, password: password, channel: channelContext.channel)
        case .acceptSession(let registrationID):
            startSession(registrationID, channel: channelContext.channel)
        case .loadInbox(let after, let packets):
            if !packets.isEmpty { send(packets, channelContext) }
            loadInbox(after: after, channel: channelContext.channel)
        case .send(let packets):
            send(packets, channelContext)
        case .sendAndClose(let packet, let reason):
            let channel = channelContext.channel
            if let bytes = encode([packet], channelContext) {
                channelContext.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { _ in channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
            recordClose(reason)
        case .close(let reason):
            channelContext.close(promise: nil)
            recordClose(reason)
        case .acknowledged(let outgoing, let ackedThrough, let next, let loadAfter):
            context.metrics.acknowledgements.increment()
            resolveWaiter(for: outgoing)
            if let ackedThrough, let device {
                context.acks.acknowledged(deviceID: device.deviceID, appID: device.appID, epoch: epoch ?? 0, through: ackedThrough)
            }
            if !next.isEmpty { send(next, channelContext) }
            if let loadAfter { loadInbox(after: loadAfter, channel: channelContext.channel) }
        case .alreadyAcknowledged(let outgoing):
            resolveWaiter(for: outgoing)
        case .deviceEvent(let payload, let reply):
            context.metrics.deviceEvents.increment()
            if let device { context.onDeviceEvent(device, payload) }
            if let reply { send([reply], channelContext) }
        }
    }

    /// Writes `packets` as one buffer; the flush comes with the loop's next round of flushes.
    private func send(_ packets: [MQTTPacket], _ channelContext: ChannelHandlerContext) {
        guard let bytes = encode(packets, channelContext) else { return }
        channelContext.write(wrapOutboundOut(bytes), promise: nil)
        if machine.sentThrough > recordedSent, let device {
            recordedSent = machine.sentThrough
            context.acks.sent(deviceID: device.deviceID, appID: device.appID, epoch: epoch ?? 0, through: recordedSent)
        }
        if !flushPending {
            flushPending = true
            // Flushed together with the loop's other connections' writes.
            sweeper?.flushes.value.add(self)
        }
    }

    /// Flushes what ``send(_:_:)`` wrote (``LoopFlushes``).
    func flushNow() {
        flushPending = false
        channelContext?.flush()
    }

    /// The wire form of `packets`, or nil (and the connection closed) if one cannot be
    /// encoded, which only a bug in Herald can cause: the encoder refuses what a peer
    /// couldn't decode.
    private func encode(_ packets: [MQTTPacket], _ channelContext: ChannelHandlerContext) -> ByteBuffer? {
        var bytes = channelContext.channel.allocator.buffer(capacity: 0)
        do {
            for packet in packets { try encoder.write(packet, into: &bytes) }
            return bytes
        } catch {
            logger.error("cannot encode a packet; closing the connection", metadata: metadata(["error": "\(error)"]))
            channelContext.close(promise: nil)
            return nil
        }
    }

    /// Tells whoever waits for this message that the device acknowledged it.
    private func resolveWaiter(for outgoing: Outgoing) {
        waits.acknowledged(DeliveryKey(outgoing))?.resolve(.acknowledged)
    }

    private func startSession(_ registrationID: String, channel: any Channel) {
        guard let device, let channelContext else { return }
        send([.connAck(.init(returnCode: .accepted))], channelContext)
        context.metrics.connects.increment()
        context.metrics.connections.record(context.registry.count + 1)
        let handle = ConnectionHandle(id: connectionID, deviceID: device.deviceID, eventLoop: channel.eventLoop, target: .live(self))
        if let previous = context.registry.register(registrationID, handle) {
            context.withConnection(previous, key: RegistrationKey(registrationID)) { $0.takenOver() }
        }
        loadInbox(after: 0, channel: channel)
    }

    private func recordClose(_ reason: MQTTSessionStateMachine.CloseReason) {
        context.metrics.disconnected(reason)
        logger.debug("connection closed", metadata: metadata(["herald.reason": "\(reason.rawValue)"]))
    }

    var logger: Logger { context.logger }

    /// `extra` with the connection's address and device: built only for lines that are
    /// logged, not kept per connection.
    func metadata(_ extra: Logger.Metadata) -> Logger.Metadata {
        var metadata = extra
        metadata["herald.connection"] = "\(channelContext?.channel.remoteAddress?.description ?? "?")"
        if let device { metadata["herald.registration_id"] = "\(device.registrationID)" }
        return metadata
    }

    func finish() {
        sweeper?.remove(self)
        if let device {
            context.registry.remove(device.registrationID, id: connectionID)
        }
        releaseSession()
        for receiver in waits.removeAll() { receiver.resolve(.noAcknowledgement) }
        context.metrics.connections.record(context.registry.count)
    }
}
