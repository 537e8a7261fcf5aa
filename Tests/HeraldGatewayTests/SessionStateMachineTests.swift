import HeraldMQTT
import HeraldStore
import NIOCore
import Testing

@testable import HeraldGateway

/// Inbox positions on one connection when concurrent fan-outs hand messages to the gateway
/// out of seq order: stored messages go out in seq order, each once, so "acknowledged
/// through" never moves past a message the device hasn't acknowledged.
@Suite struct SessionStateMachineTests {
    @Test func aLiveSeqThatSkipsOneWaitsForTheInboxThenAllGoOutInOrder() throws {
        var machine = try Self.activeMachine(through: 4)
        guard case .loadInbox(_, let first) = machine.deliver(Self.message(seq: 7)), first.isEmpty else {
            Issue.record("seq 7 skips 5 and 6: the inbox is loaded, nothing sent")
            return
        }
        guard case .none = machine.deliver(Self.message(seq: 5)) else {
            Issue.record("while the inbox loads, stored messages wait")
            return
        }
        let action = machine.replayLoaded([5, 6, 7].map { Self.message(seq: $0, dup: true) }, through: 7, complete: true)
        let packetIDs = try Self.published(action)
        #expect(packetIDs.map(\.seq) == [5, 6, 7])
        // The device acknowledges in the order it received: the position follows.
        for (packetID, seq) in packetIDs {
            #expect(Self.ackedThrough(machine.packetReceived(.pubAck(packetID: packetID))) == .some(seq))
        }
        // The live copy of 6 arriving now is not sent again: its sender hears it was acknowledged.
        guard case .alreadyAcknowledged(let late) = machine.deliver(Self.message(seq: 6)) else {
            Issue.record("seq 6 was acknowledged already")
            return
        }
        #expect(late.seq == 6)
    }

    @Test func lateLiveCopiesOfLoadedSeqsAreNotSentTwice() throws {
        var machine = try Self.activeMachine(through: 0)
        guard case .loadInbox = machine.deliver(Self.message(seq: 3)) else {
            Issue.record("seq 3 skips 1 and 2")
            return
        }
        let packetIDs = try Self.published(machine.replayLoaded([1, 2, 3].map { Self.message(seq: $0, dup: true) }, through: 3, complete: true))
        #expect(packetIDs.map(\.seq) == [1, 2, 3])
        for seq in [1, 2] {
            guard case .none = machine.deliver(Self.message(seq: seq)) else {
                Issue.record("seq \(seq) is in flight already")
                return
            }
        }
    }

    @Test func loadedMessagesThisConnectionHadAcknowledgedAreNotSentAgain() throws {
        var machine = try Self.activeMachine(through: 0)
        let first = try Self.published(machine.deliver(Self.message(seq: 1)))
        #expect(Self.ackedThrough(machine.packetReceived(.pubAck(packetID: try #require(first.first).packetID))) == .some(1))
        guard case .loadInbox = machine.deliver(Self.message(seq: 3)) else {
            Issue.record("seq 3 skips 2")
            return
        }
        // The store hasn't heard of the acknowledgement of 1 yet: the load still has it.
        let loaded = try Self.published(machine.replayLoaded([1, 2, 3].map { Self.message(seq: $0, dup: true) }, through: 3, complete: true))
        #expect(loaded.map(\.seq) == [2, 3])
    }

    @Test func aLoadCutShortByItsLimitIsFollowedByAnother() throws {
        var machine = try Self.activeMachine(through: 0)
        guard case .loadInbox = machine.deliver(Self.message(seq: 3)) else {
            Issue.record("seq 3 skips 1 and 2")
            return
        }
        guard case .loadInbox(let after, let sent) = machine.replayLoaded([Self.message(seq: 1, dup: true)], through: 1, complete: false) else {
            Issue.record("2 is still missing: load again")
            return
        }
        #expect(after == 1)
        #expect(try Self.published(.send(sent)).map(\.seq) == [1])
        let rest = try Self.published(machine.replayLoaded([2, 3].map { Self.message(seq: $0, dup: true) }, through: 3, complete: true))
        #expect(rest.map(\.seq) == [2, 3])
    }

    @Test func aSecondCopyOfAQueuedOrSentSeqIsDropped() throws {
        var machine = try Self.activeMachine(through: 2)
        guard case .send = machine.deliver(Self.message(seq: 3)) else {
            Issue.record("the first copy is sent")
            return
        }
        guard case .none = machine.deliver(Self.message(seq: 3)) else {
            Issue.record("the second copy is dropped")
            return
        }
    }

    @Test func messagesWithoutSeqAreSentAtOnceEvenWhileTheInboxLoads() throws {
        var machine = try Self.activeMachine(through: 0)
        guard case .loadInbox = machine.deliver(Self.message(seq: 2)) else {
            Issue.record("seq 2 skips 1")
            return
        }
        let onlineOnly = Outgoing(seq: nil, messageID: "ttl0", payload: ByteBuffer(string: "{}"), dup: false, token: 1)
        guard case .send(let packets) = machine.deliver(onlineOnly), packets.count == 1 else {
            Issue.record("a TTL 0 message has no place in the order")
            return
        }
    }

    /// A device with more stored messages than a page: as its acknowledgements free the
    /// window, the page after the last one is loaded, and everything goes out in order.
    @Test func aPageCutShortByItsLimitIsFollowedByTheNextAsTheWindowFrees() throws {
        var machine = try Self.connectedMachine()
        let first = try Self.published(machine.replayLoaded((1...20).map { Self.message(seq: $0) }, through: 20, complete: false))
        #expect(first.map(\.seq) == Array(1...8))
        var sent = first
        var loadAfter: Int64?
        var acknowledged = 0
        while loadAfter == nil, acknowledged < sent.count {
            guard case .acknowledged(_, _, let next, let after) = machine.packetReceived(.pubAck(packetID: sent[acknowledged].packetID)) else {
                Issue.record("a PUBACK of a message in flight")
                return
            }
            acknowledged += 1
            sent += try Self.published(.send(next))
            loadAfter = after
        }
        // Fewer than a window's worth (8) queued: the next page is read, after the last seq loaded.
        #expect(loadAfter == 20)
        #expect(acknowledged == 5)
        var rest = try Self.published(machine.replayLoaded((21...25).map { Self.message(seq: $0) }, through: 25, complete: true))
        while acknowledged < sent.count + rest.count {
            let packetID = acknowledged < sent.count ? sent[acknowledged].packetID : rest[acknowledged - sent.count].packetID
            guard case .acknowledged(_, _, let next, let after) = machine.packetReceived(.pubAck(packetID: packetID)) else {
                Issue.record("a PUBACK of a message in flight")
                return
            }
            #expect(after == nil)
            rest += try Self.published(.send(next))
            acknowledged += 1
        }
        #expect((sent + rest).map(\.seq) == Array(1...25))
    }

    /// Live stored messages for a device that never acknowledges: it holds its window and
    /// a bounded queue; the rest is left to the store and loaded, in order, once it
    /// acknowledges.
    @Test func aDeviceThatNeverAcknowledgesHoldsAWindowAndABoundedQueue() throws {
        var machine = MQTTSessionStateMachine(maxInFlight: 8, maxQueued: 20)
        _ = machine.packetReceived(.connect(.init(clientID: "rid", username: "app", password: ByteBuffer(string: "secret"))))
        _ = machine.authenticated(.accepted(DeviceIdentity(deviceID: 1, appID: 1, registrationID: "rid")))
        _ = machine.replayLoaded([], through: 0, complete: true)
        var sent: [(packetID: UInt16, seq: Int64)] = []
        for seq in 1...10_000 {
            let action = machine.deliver(Self.message(seq: seq))
            if case .send = action { sent += try Self.published(action) }
        }
        #expect(machine.isOpen)
        #expect(sent.map(\.seq) == Array(1...8))
        // Its window, a full queue and, for the next load, a window's worth held back.
        #expect(machine.unacknowledged().count == 8 + 20 + 8)
        // As it acknowledges, the queued ones go out, then the store is read after them.
        var acknowledged = 0
        var loadAfter: Int64?
        while loadAfter == nil, acknowledged < sent.count {
            guard case .acknowledged(_, _, let next, let after) = machine.packetReceived(.pubAck(packetID: sent[acknowledged].packetID)) else {
                Issue.record("a PUBACK of a message in flight")
                return
            }
            acknowledged += 1
            sent += try Self.published(.send(next))
            loadAfter = after
        }
        #expect(loadAfter == 28)
        #expect(sent.map(\.seq) == Array(1...sent.count).map(Int64.init))
    }

    private static func connectedMachine() throws -> MQTTSessionStateMachine {
        var machine = MQTTSessionStateMachine(maxInFlight: 8, maxQueued: 100)
        _ = machine.packetReceived(.connect(.init(clientID: "rid", username: "app", password: ByteBuffer(string: "secret"))))
        _ = machine.authenticated(.accepted(DeviceIdentity(deviceID: 1, appID: 1, registrationID: "rid")))
        return machine
    }

    private static func activeMachine(through: Int64) throws -> MQTTSessionStateMachine {
        var machine = MQTTSessionStateMachine(maxInFlight: 8, maxQueued: 100)
        _ = machine.packetReceived(.connect(.init(clientID: "rid", username: "app", password: ByteBuffer(string: "secret"))))
        _ = machine.authenticated(.accepted(DeviceIdentity(deviceID: 1, appID: 1, registrationID: "rid")))
        _ = machine.replayLoaded([], through: through, complete: true)
        return machine
    }

    private static func message(seq: Int, dup: Bool = false) -> Outgoing {
        Outgoing(seq: Int64(seq), messageID: "m\(seq)", payload: ByteBuffer(string: "\(seq)"), dup: dup, token: 0)
    }

    /// The PUBLISHes an action sends: packet id and the seq named by the message id.
    private static func published(_ action: MQTTSessionStateMachine.Action) throws -> [(packetID: UInt16, seq: Int64)] {
        if case .none = action { return [] }
        guard case .send(let packets) = action else {
            Issue.record("expected packets, got \(action)")
            return []
        }
        return try packets.map { packet in
            guard case .publish(let publish) = packet else { throw Unexpected(packet: "\(packet)") }
            return (try #require(publish.packetID), try #require(Int64(String(buffer: publish.payload))))
        }
    }

    /// nil: not an acknowledgement; .some(nil): acknowledged, position unmoved.
    private static func ackedThrough(_ action: MQTTSessionStateMachine.Action) -> Int64?? {
        guard case .acknowledged(_, let through, _, _) = action else { return nil }
        return .some(through)
    }

    private struct Unexpected: Error {
        var packet: String
    }
}
