import CoreMetrics
import Foundation
import HeraldMQTT
import HeraldStore
import Logging
import NIOConcurrencyHelpers
import NIOCore

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

    private let context: GatewayContext
    private var machine: MQTTSessionStateMachine
    private var reader: MQTTPacketReader
    private let encoder = MQTTPacketEncoder()
    /// Set while the handler is in the pipeline.
    private var channelContext: ChannelHandlerContext?
    /// The acknowledgement deadlines of this connection's event loop.
    private var deadlines: AckDeadlines?
    /// Flushes this connection's writes together with its loop's other connections'.
    private var flushes: LoopFlushes?
    private var flushPending = false
    private var device: DeviceIdentity?
    /// The epoch of the device's session in the cluster, once this connection claimed it
    /// (before its first inbox load).
    private var epoch: Int64?
    /// This connection's own claim is under way (it may already hold an epoch handed to it
    /// by the connection it replaced, ``adopt(epoch:)``, older than its claim will be).
    private var claiming = false
    /// The newest epoch another node told of while this connection's claim was under way:
    /// if it is above what the connection holds once the claim is in, it closes then.
    private var claimedElsewhere: Int64 = 0
    /// The "sent through" last handed to the ack recorder.
    private var recordedSent: Int64 = 0
    /// Deliveries whose outcome someone waits for, each with its deadline's ticket.
    private var waits = AckWaits<OutcomeReceiver>()
    /// The CONNECT timeout, the keepalive, the credentials check's time limit and the
    /// slow-consumer rule, told the time by this handler (``NIODeadline/now()``) and asked
    /// by ``sweep(now:)``.
    private var timers: ConnectionTimers
    /// The credentials check under way (it has ``GatewayConfiguration/authTimeout``).
    private var authentication: CancellationSignal?

    init(context: GatewayContext) {
        self.context = context
        self.machine = MQTTSessionStateMachine(maxInFlight: context.configuration.maxInFlight, maxQueued: context.configuration.maxQueued)
        self.reader = MQTTPacketReader(maximumPacketSize: context.configuration.maxPacketSize)
        self.timers = ConnectionTimers(openedAt: .now(), configuration: context.configuration)
    }

    // MARK: Channel events

    func handlerAdded(context channelContext: ChannelHandlerContext) {
        self.channelContext = channelContext
        timers = ConnectionTimers(openedAt: .now(), configuration: context.configuration)
        let sweeper = context.sweeper(for: channelContext.eventLoop)
        sweeper.add(self)
        deadlines = sweeper.deadlines.value
        flushes = sweeper.flushes.value
    }

    func handlerRemoved(context channelContext: ChannelHandlerContext) {
        self.channelContext = nil
        deadlines = nil
        flushes = nil
    }

    func channelInactive(context channelContext: ChannelHandlerContext) {
        if machine.isOpen { perform(machine.close(.clientDisconnected)) }
        finish(channelContext)
        channelContext.fireChannelInactive()
    }

    func channelRead(context channelContext: ChannelHandlerContext, data: NIOAny) {
        timers.heard(at: .now())
        reader.append(unwrapInboundIn(data))
        do {
            while machine.isOpen, let packet = try reader.next() {
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
        guard let deadlines, machine.registrationID != nil else {
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
            break
        case .authenticationTimedOut:
            // The database doesn't answer (an outage): the device hears so now and retries.
            authentication?.cancel()
            authenticationEnded(.refused(.serverUnavailable), clientID: "", address: nil)
        case .close(let reason):
            perform(machine.close(reason))
        }
    }

    // MARK: Actions

    private func perform(_ action: MQTTSessionStateMachine.Action) {
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
            if let ackedThrough, let device { context.acks.acknowledged(deviceID: device.deviceID, epoch: epoch ?? 0, through: ackedThrough) }
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
            context.acks.sent(deviceID: device.deviceID, epoch: epoch ?? 0, through: recordedSent)
        }
        if !flushPending {
            flushPending = true
            flushes?.add(self)
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

    private func authenticate(clientID: String, username: String, password: String, channel: any Channel) {
        let authenticator = context.authenticator
        let handler = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let address = channel.remoteAddress?.ipAddress
        let signal = CancellationSignal()
        context.tasks.submit(cancelledBy: signal) {
            let result = await authenticator.authenticate(clientID: clientID, username: username, password: password)
            channel.eventLoop.execute {
                handler.value.authenticationEnded(result, clientID: clientID, address: address)
            }
        }
        authentication = signal
        timers.authenticationStarted(at: .now())
    }

    /// The credentials were checked (or the check timed out, see ``sweep(now:)``). A
    /// failure past the throttle's free ones is answered after its delay, scheduled on the
    /// loop, which serves other connections meanwhile; a success is never delayed.
    private func authenticationEnded(_ result: AuthResult, clientID: String, address: String?) {
        guard authentication != nil, let channelContext else { return }
        authentication = nil
        timers.authenticationEnded()
        switch result {
        case .accepted(let device):
            self.device = device
        case .refused(let code):
            context.metrics.authFailures.increment()
            if code == .badUsernameOrPassword {
                let delay = context.throttle.withLockedValue { $0.failed(registrationID: clientID, address: address, at: .now) }
                if delay > .zero {
                    context.metrics.authThrottled.increment()
                    channelContext.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
                        self.perform(self.machine.authenticated(result))
                    }
                    return
                }
            }
        }
        perform(machine.authenticated(result))
    }

    private func startSession(_ registrationID: String, channel: any Channel) {
        guard let device, let channelContext else { return }
        send([.connAck(.init(returnCode: .accepted))], channelContext)
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
        loadInbox(after: 0, channel: channel)
    }

    /// Loads a page of the device's unacknowledged messages after seq `after` and hands it
    /// to the session; the first load claims the device's session in the cluster before it
    /// reads (``SessionBook``). A claim or load that fails closes the connection: the
    /// device reconnects and its replay loads again.
    private func loadInbox(after: Int64, channel: any Channel) {
        guard let device else { return }
        let store = context.store
        let acks = context.acks
        let pageSize = max(1, min(context.configuration.replayPageSize, context.configuration.maxQueued))
        let handler = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let gateway = context
        let claiming = epoch == nil && !self.claiming
        if claiming { self.claiming = true }
        let id = ObjectIdentifier(self)
        context.tasks.submit {
            var claim: SessionClaim?
            if claiming {
                let registry = gateway.registry
                claim = try? await gateway.sessions.claim(device) { registry.connection(device.registrationID)?.id == id }
                if let claim { gateway.registry.claimed(device.registrationID, id: id, epoch: claim.epoch) }
            }
            // Read before the load too: a batch written meanwhile is in neither otherwise.
            let sentBefore = acks.pendingSent(deviceID: device.deviceID) ?? 0
            let snapshot = claiming && claim == nil ? nil : try? await store.pendingInbox(deviceID: device.deviceID, after: after, limit: pageSize)
            let acked = acks.pendingAcknowledgement(deviceID: device.deviceID) ?? 0
            // DUP on what an earlier connection sent (recorded, or about to be), and on what a
            // process before this one may have sent; not on the rest.
            let sent = max(sentBefore, acks.pendingSent(deviceID: device.deviceID) ?? 0)
            let replay = (snapshot?.messages ?? []).filter { $0.seq > acked }.map {
                Outgoing(
                    seq: $0.seq,
                    msgID: $0.msgID,
                    payload: ByteBuffer(bytes: $0.payload),
                    dup: $0.wasSent || $0.seq <= sent || gateway.mayHaveBeenSentBeforeStart($0.msgID),
                    token: 0
                )
            }
            channel.eventLoop.execute {
                let handler = handler.value
                if let claim {
                    handler.claimed(claim, device: device)
                }
                guard let snapshot else {
                    handler.perform(handler.machine.close(.storeUnavailable))
                    return
                }
                handler.context.metrics.replays.increment(by: replay.count)
                handler.perform(handler.machine.replayLoaded(replay, through: snapshot.through, complete: snapshot.isComplete))
            }
        }
    }

    /// The device's session is this connection's from `claim.epoch` on (or from a higher
    /// epoch it was handed, ``adopt(epoch:)``). A connection that closed while it claimed
    /// gives the session back at once, or to the connection that replaced it here.
    private func claimed(_ claim: SessionClaim, device: DeviceIdentity) {
        let held = max(epoch ?? 0, claim.epoch)
        epoch = held
        claiming = false
        if claimedElsewhere > held { perform(machine.close(.takenOver)) }
        if let previous = claim.previousNode {
            logger.debug("device taken over from another node", metadata: metadata(["herald.previous_node": "\(previous)"]))
        }
        if !machine.isOpen { releaseSession() }
    }

    /// This connection is closed: tells the cluster the device is offline, unless a newer
    /// connection claimed it. Claims of one device on this node may commit out of the
    /// order of their connections (two batches at once), so a connection replaced here may
    /// hold the newest epoch: it hands it to the connection that replaced it instead, which
    /// holds the device's session from then on.
    private func releaseSession() {
        guard let device, let epoch else { return }
        if let current = context.registry.connection(device.registrationID), current.id != ObjectIdentifier(self) {
            context.registry.claimed(device.registrationID, id: current.id, epoch: epoch)
            current.eventLoop.execute { current.handler.value.adopt(epoch: epoch) }
            return
        }
        let sessions = context.sessions
        context.tasks.submit { await sessions.release(SessionEpoch(deviceID: device.deviceID, epoch: epoch)) }
    }

    /// The connection this one replaced here held the device's session at `epoch`, newer
    /// than this one's claim may be: this connection holds it now.
    func adopt(epoch handed: Int64) {
        epoch = max(epoch ?? 0, handed)
        if !machine.isOpen { releaseSession() }
    }

    /// Another node claimed the device with `newer`: this connection closes, unless it is
    /// itself the newer one (its claim came later). A notice that comes while this
    /// connection's own claim is under way is kept, and acted on once the claim is in.
    func sessionClaimedElsewhere(epoch newer: Int64) {
        guard let epoch, !claiming else {
            claimedElsewhere = max(claimedElsewhere, newer)
            return
        }
        guard epoch < newer else { return }
        perform(machine.close(.takenOver))
    }

    private func recordClose(_ reason: MQTTSessionStateMachine.CloseReason) {
        context.metrics.disconnected(reason)
        logger.debug("connection closed", metadata: metadata(["herald.reason": "\(reason.rawValue)"]))
    }

    private var logger: Logger { context.logger }

    /// `extra` with the connection's address and device: built only for lines that are
    /// logged, not kept per connection.
    private func metadata(_ extra: Logger.Metadata) -> Logger.Metadata {
        var metadata = extra
        metadata["herald.connection"] = "\(channelContext?.channel.remoteAddress?.description ?? "?")"
        if let device { metadata["herald.registration_id"] = "\(device.registrationID)" }
        return metadata
    }

    private func finish(_ channelContext: ChannelHandlerContext) {
        context.sweeper(for: channelContext.eventLoop).remove(self)
        if let device {
            context.registry.remove(device.registrationID, id: ObjectIdentifier(self))
        }
        releaseSession()
        for receiver in waits.removeAll() { receiver.resolve(.noAcknowledgement) }
        context.metrics.connections.record(context.registry.count)
    }
}
