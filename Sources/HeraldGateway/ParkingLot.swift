import CHeraldEpoll
import Foundation
import HeraldCore
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Idle connections kept without a channel: a record each in one table, their sockets
/// watched by one epoll descriptor on a thread of the lot's own.
///
/// A device is connected and silent almost all the time, and a NIO channel with its
/// pipeline costs about 1,800 bytes whether it talks or not. A connection with nothing
/// under way (``MQTTConnectionHandler/parkIfIdle(now:)``) gives its channel up and leaves
/// its session here as a ``ParkedConnection`` (about a hundred bytes); the socket stays
/// open. The lot answers the device's PINGREQs itself and keeps the keepalive. Anything
/// else, bytes that are not a PINGREQ, the peer closing, silence past the keepalive, or
/// Herald having something for the device, hands the record back to its event loop,
/// which gives the connection a channel again (``GatewayContext/promote(_:)``).
///
/// Records are only taken out on their connection's event loop (``take(_:)``); the lot's
/// thread only marks them for waking and tells the loop. So a loop that finds a ticket
/// gone knows the connection was brought back before, on that same loop, or closed.
final class ParkingLot: Sendable {
    /// A parked connection's place: its slot, and which use of the slot.
    struct Ticket: Hashable, Sendable {
        let slot: UInt32
        let generation: UInt32

        fileprivate var epollData: UInt64 { UInt64(generation) << 32 | UInt64(slot) }

        fileprivate init(slot: UInt32, generation: UInt32) {
            self.slot = slot
            self.generation = generation
        }

        fileprivate init(epollData: UInt64) {
            self.init(slot: UInt32(truncatingIfNeeded: epollData), generation: UInt32(truncatingIfNeeded: epollData >> 32))
        }
    }

    /// Why the lot hands a connection back.
    enum Wake: Sendable, Equatable {
        /// It has bytes to read (not a PINGREQ), or its peer closed or failed.
        case readable
        /// Nothing was heard within its keepalive.
        case silent
    }

    private struct Slot {
        var record: ParkedConnection?
        var generation: UInt32 = 0
        /// Handed to the loop to be taken: no longer watched.
        var waking = false
    }

    private struct Table {
        var slots: [Slot] = []
        var free: [UInt32] = []
        var count = 0
        /// Connections parked since the heap was last trimmed, and as of the last check.
        var parkedSinceTrim = 0
        var parkedAtLastCheck = 0
    }

    private let table = Mutex(Table())
    private let epoll: Int32
    /// Written to wake the lot's thread to stop.
    private let stopEvent: Int32
    private let stopping = Atomic<Bool>(false)
    let loops: [any EventLoop]

    init(loops: [any EventLoop]) {
        self.loops = loops
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        stopEvent = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = UInt64.max
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, stopEvent, &event)
    }

    deinit {
        close(epoll)
        close(stopEvent)
    }

    /// Connections parked now.
    var count: Int { table.withLock { $0.count } }

    /// Parks `record` (its socket open, nothing of it unread in Herald); nil if the socket
    /// can't be watched, and then the caller keeps it.
    func park(_ record: ParkedConnection) -> Ticket? {
        table.withLock { table in
            let slot: UInt32
            if let reused = table.free.popLast() {
                slot = reused
            } else {
                slot = UInt32(table.slots.count)
                table.slots.append(Slot())
            }
            table.slots[Int(slot)].generation &+= 1
            let ticket = Ticket(slot: slot, generation: table.slots[Int(slot)].generation)
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
            event.data.u64 = ticket.epollData
            guard epoll_ctl(epoll, EPOLL_CTL_ADD, record.fd, &event) == 0 else {
                table.free.append(slot)
                return nil
            }
            table.slots[Int(slot)].record = record
            table.slots[Int(slot)].waking = false
            table.count += 1
            table.parkedSinceTrim += 1
            return ticket
        }
    }

    /// Takes the record out of the lot (on its connection's event loop), nil if it was
    /// taken before. The socket is the caller's from then on.
    func take(_ ticket: Ticket) -> ParkedConnection? {
        table.withLock { table in
            let index = Int(ticket.slot)
            guard index < table.slots.count, table.slots[index].generation == ticket.generation,
                let record = table.slots[index].record
            else { return nil }
            if !table.slots[index].waking { _ = epoll_ctl(epoll, EPOLL_CTL_DEL, record.fd, nil) }
            table.slots[index].record = nil
            table.slots[index].waking = false
            table.free.append(ticket.slot)
            table.count -= 1
            return record
        }
    }

    /// How many connections are parked from `loop` (the index in ``loops``).
    func count(loop: Int) -> Int {
        table.withLock { table in table.slots.lazy.filter { $0.record.map { Int($0.loop) == loop } ?? false }.count }
    }

    /// The tickets of the connections parked from `loop` (the index in ``loops``).
    func tickets(loop: Int) -> [Ticket] {
        table.withLock { table in
            table.slots.indices.compactMap { index in
                guard let record = table.slots[index].record, Int(record.loop) == loop else { return nil }
                return Ticket(slot: UInt32(index), generation: table.slots[index].generation)
            }
        }
    }

    // MARK: The lot's thread

    /// Watches the parked sockets until ``stop()``: answers PINGREQs, and hands to
    /// `wake` (on the lot's thread) each connection to bring back, once.
    func start(wake: @escaping @Sendable (_ loop: any EventLoop, Ticket, Wake) -> Void) {
        let thread = Thread { [self] in
            var events = [epoll_event](repeating: epoll_event(), count: 256)
            var lastSweep = NIODeadline.now()
            while !stopping.load(ordering: .relaxed) {
                let ready = epoll_wait(epoll, &events, Int32(events.count), 1000)
                var woken: [(Int, Ticket, Wake)] = []
                if ready > 0 {
                    table.withLock { table in
                        for event in events[0..<Int(ready)] where event.data.u64 != UInt64.max {
                            let ticket = Ticket(epollData: event.data.u64)
                            if let loop = readable(ticket, events: event.events, &table) { woken.append((loop, ticket, .readable)) }
                        }
                    }
                }
                let now = NIODeadline.now()
                if now - lastSweep >= .seconds(1) {
                    lastSweep = now
                    table.withLock { table in woken += silent(at: now, &table) }
                    trimHeapIfWorthIt()
                }
                for (loop, ticket, reason) in woken { wake(loops[loop], ticket, reason) }
            }
        }
        thread.name = "herald-parking-lot"
        thread.start()
    }

    /// Stops the lot's thread (the parked sockets stay as they are).
    func stop() {
        stopping.store(true, ordering: .relaxed)
        var one: UInt64 = 1
        _ = write(stopEvent, &one, 8)
    }

    /// A parked socket is readable: a PINGREQ is answered here; anything else wakes the
    /// connection (returns its loop).
    private func readable(_ ticket: Ticket, events: UInt32, _ table: inout Table) -> Int? {
        let index = Int(ticket.slot)
        guard index < table.slots.count, table.slots[index].generation == ticket.generation, !table.slots[index].waking,
            let record = table.slots[index].record
        else { return nil }
        if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) == 0, Self.answerPing(record.fd) {
            table.slots[index].record?.heard(at: .now())
            return nil
        }
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, record.fd, nil)
        table.slots[index].waking = true
        return Int(record.loop)
    }

    /// PINGREQ (0xC0 0x00) waiting on `fd` is read and answered with PINGRESP; false if
    /// what waits is anything else, or the answer can't be written whole.
    private static func answerPing(_ fd: Int32) -> Bool {
        var bytes: (UInt8, UInt8) = (0, 0)
        let peeked = withUnsafeMutableBytes(of: &bytes) { recv(fd, $0.baseAddress, 2, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        guard peeked == 2, bytes == (0xC0, 0x00) else { return false }
        _ = withUnsafeMutableBytes(of: &bytes) { recv(fd, $0.baseAddress, 2, Int32(MSG_DONTWAIT)) }
        var response: (UInt8, UInt8) = (0xD0, 0x00)
        let sent = withUnsafeBytes(of: &response) { send(fd, $0.baseAddress, 2, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        return sent == 2
    }

    /// The connections silent past their keepalive, no longer watched.
    private func silent(at now: NIODeadline, _ table: inout Table) -> [(Int, Ticket, Wake)] {
        var woken: [(Int, Ticket, Wake)] = []
        for index in table.slots.indices where !table.slots[index].waking {
            guard let record = table.slots[index].record, record.isSilent(at: now) else { continue }
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, record.fd, nil)
            table.slots[index].waking = true
            woken.append((Int(record.loop), Ticket(slot: UInt32(index), generation: table.slots[index].generation), .silent))
        }
        return woken
    }

    /// Gives the pages the parked connections' channels used back to the system once a
    /// burst of parking has settled (none parked in the last second), or every 4,096
    /// parked while it goes on: glibc keeps freed memory inside its heap otherwise, and
    /// the process's resident memory stays that of every connection with a channel.
    /// Called once a second.
    private func trimHeapIfWorthIt() {
        let due = table.withLock { table -> Bool in
            defer { table.parkedAtLastCheck = table.parkedSinceTrim }
            guard table.parkedSinceTrim > 0, table.parkedSinceTrim == table.parkedAtLastCheck || table.parkedSinceTrim >= 4096 else {
                return false
            }
            table.parkedSinceTrim = 0
            return true
        }
        if due { ProcessHeap.trim() }
    }
}
