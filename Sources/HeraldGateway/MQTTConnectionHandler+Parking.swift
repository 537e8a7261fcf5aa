import CoreMetrics
import Foundation
import HeraldMQTT
import HeraldStore
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Parking: a connection with nothing under way for ``GatewayConfiguration/parkAfter``
/// gives up its channel and waits in the ``ParkingLot`` as a record of its session.
extension MQTTConnectionHandler {
    /// Whether nothing is under way on the connection but its keepalive: an active session
    /// with nothing in flight, queued or to load, no acknowledgement awaited, no claim, no
    /// credentials check, nothing unread or unflushed.
    var isIdle: Bool {
        guard parkable, parkedAs == nil, awaitingChannel == nil, machine.parkable != nil, device != nil, let epoch,
            !claiming, claimedElsewhere <= epoch, authentication == nil, waits.count == 0, !flushPending, reader.bufferedBytes == 0,
            channelContext?.channel.isWritable == true
        else { return false }
        return true
    }

    /// Parks the connection if it has been idle for ``GatewayConfiguration/parkAfter``. An
    /// empty write goes first: it completes once every write before it has, so nothing is
    /// left in the channel's queue when the channel goes.
    func parkIfIdle(now: NIODeadline) {
        guard let parkAfter = context.configuration.parkAfter, timers.isQuiet(at: now, for: TimeAmount(parkAfter)), isIdle,
            let channelContext
        else { return }
        let handler = NIOLoopBound(self, eventLoop: channelContext.eventLoop)
        channelContext.writeAndFlush(wrapOutboundOut(channelContext.channel.allocator.buffer(capacity: 0))).whenSuccess { handler.value.park() }
    }

    /// Hands the socket and the session to the lot and closes the channel (not the
    /// connection: the lot holds its own descriptor of the socket). Does nothing if
    /// anything started meanwhile, or the socket can't be watched.
    private func park() {
        guard isIdle, let channelContext, let sweeper, let device, let epoch, let session = machine.parkable,
            let descriptor = descriptor >= 0 ? descriptor : SocketDescriptor.of(channelContext.channel)
        else { return }
        let own = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard own >= 0 else { return }
        let key = RegistrationKey(device.registrationID)
        let record = ParkedConnection(
            fd: own,
            loop: UInt16(sweeper.index),
            connectionID: connectionID,
            deviceID: device.deviceID,
            appID: device.appID,
            key: key,
            epoch: epoch,
            replayDUPThrough: replayDUPThrough,
            session: session,
            keepalive: timers.keepalive
        )
        guard let ticket = context.lot.park(record) else {
            close(own)
            return
        }
        parkedAs = ticket
        context.registry.move(key, id: connectionID, to: .parked(ticket))
        sweeper.remove(self)
        self.sweeper = nil
        self.channelContext = nil
        parking = true
        channelContext.close(promise: nil)
        context.metrics.parked.record(context.lot.count)
    }
}

/// The descriptor of a channel's socket. NIO has no API for it: its socket channels name
/// it in their description (`SocketChannel { BaseSocket { fd=17 }, ... }`), and a number
/// read there is only trusted if the socket it names has the channel's two addresses.
enum SocketDescriptor {
    static func of(_ channel: any Channel) -> Int32? {
        let description = "\(channel)"
        guard let start = description.range(of: "fd=") else { return nil }
        let digits = description[start.upperBound...].prefix { $0.isNumber }
        guard let descriptor = Int32(digits), let local = channel.localAddress?.port, let remote = channel.remoteAddress?.port,
            port(of: descriptor, peer: false) == local, port(of: descriptor, peer: true) == remote
        else { return nil }
        return descriptor
    }

    private static func port(of descriptor: Int32, peer: Bool) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(descriptor, $0, &length) : getsockname(descriptor, $0, &length)
            }
        }
        guard result == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafeBytes(of: storage) { Int(UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self))) }
        case AF_INET6:
            return withUnsafeBytes(of: storage) { Int(UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self))) }
        default:
            return nil
        }
    }
}
