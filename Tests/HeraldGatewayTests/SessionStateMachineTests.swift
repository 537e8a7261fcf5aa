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
        // Seq 7 skips 5 and 6: the inbox is loaded after 4, nothing sent.
        #expect(machine.deliver(Self.message(seq: 7)) == .loadInbox(after: 4, sendFirst: []))
        // While the inbox loads, stored messages wait.
        #expect(machine.deliver(Self.message(seq: 5)) == .none)
        let loaded = machine.replayLoaded([5, 6, 7].map { Self.message(seq: $0, dup: true) }, through: 7, complete: true)
        #expect(loaded == .send(Self.publishes([5, 6, 7], dup: true)))
        // The device acknowledges in the order it received: the position follows.
        for (packetID, seq) in zip(UInt16(1)...3, 5...7) {
            let acknowledged = machine.packetReceived(.pubAck(packetID: packetID))
            #expect(acknowledged == .acknowledged(Self.message(seq: seq, dup: true), ackedThrough: Int64(seq), then: [], loadAfter: nil))
        }
        // The live copy of 6 arriving now is not sent again: its sender hears it was acknowledged.
        #expect(machine.deliver(Self.message(seq: 6)) == .alreadyAcknowledged(Self.message(seq: 6)))
    }

    @Test func lateLiveCopiesOfLoadedSeqsAreNotSentTwice() throws {
        var machine = try Self.activeMachine(through: 0)
        #expect(machine.deliver(Self.message(seq: 3)) == .loadInbox(after: 0, sendFirst: []))
        let loaded = machine.replayLoaded([1, 2, 3].map { Self.message(seq: $0, dup: true) }, through: 3, complete: true)
        #expect(loaded == .send(Self.publishes([1, 2, 3], dup: true)))
        for seq in [1, 2] {
            #expect(machine.deliver(Self.message(seq: seq)) == .none, "seq \(seq) is in flight already")
        }
    }

    @Test func loadedMessagesThisConnectionHadAcknowledgedAreNotSentAgain() throws {
        var machine = try Self.activeMachine(through: 0)
        #expect(machine.deliver(Self.message(seq: 1)) == .send(Self.publishes([1])))
        #expect(machine.packetReceived(.pubAck(packetID: 1)) == .acknowledged(Self.message(seq: 1), ackedThrough: 1, then: [], loadAfter: nil))
        #expect(machine.deliver(Self.message(seq: 3)) == .loadInbox(after: 1, sendFirst: []))
        // The store hasn't heard of the acknowledgement of 1 yet: the load still has it.
        let loaded = machine.replayLoaded([1, 2, 3].map { Self.message(seq: $0, dup: true) }, through: 3, complete: true)
        #expect(loaded == .send(Self.publishes([2, 3], from: 2, dup: true)))
    }

    @Test func aLoadCutShortByItsLimitIsFollowedByAnother() throws {
        var machine = try Self.activeMachine(through: 0)
        #expect(machine.deliver(Self.message(seq: 3)) == .loadInbox(after: 0, sendFirst: []))
        // 2 is still missing: 1 goes out and the inbox is loaded again, after it.
        let first = machine.replayLoaded([Self.message(seq: 1, dup: true)], through: 1, complete: false)
        #expect(first == .loadInbox(after: 1, sendFirst: Self.publishes([1], dup: true)))
        let rest = machine.replayLoaded([2, 3].map { Self.message(seq: $0, dup: true) }, through: 3, complete: true)
        #expect(rest == .send(Self.publishes([2, 3], from: 2, dup: true)))
    }

    /// Another node stored a message (a recall command) in the device's inbox: the
    /// connection loads what follows what it knows; a change told while a load is under way
    /// is followed by another load, since that one may have read before it.
    @Test func anInboxChangedElsewhereIsLoaded() throws {
        var machine = try Self.activeMachine(through: 2)
        #expect(machine.storeChanged() == .loadInbox(after: 2, sendFirst: []))
        #expect(machine.storeChanged() == .none)
        let loaded = machine.replayLoaded([], through: 2, complete: true)
        #expect(loaded == .loadInbox(after: 2, sendFirst: []))
        let command = machine.replayLoaded([Self.message(seq: 3)], through: 3, complete: true)
        #expect(command == .send(Self.publishes([3])))
    }

    @Test func aSecondCopyOfAQueuedOrSentSeqIsDropped() throws {
        var machine = try Self.activeMachine(through: 2)
        #expect(machine.deliver(Self.message(seq: 3)) == .send(Self.publishes([3])))
        #expect(machine.deliver(Self.message(seq: 3)) == .none)
    }

    @Test func messagesWithoutSeqAreSentAtOnceEvenWhileTheInboxLoads() throws {
        var machine = try Self.activeMachine(through: 0)
        #expect(machine.deliver(Self.message(seq: 2)) == .loadInbox(after: 0, sendFirst: []))
        // A TTL 0 message has no place in the order.
        let onlineOnly = Outgoing(seq: nil, msgID: "ttl0", payload: ByteBuffer(string: "{}"), dup: false, token: 1)
        #expect(machine.deliver(onlineOnly) == .send([Self.publish(packetID: 1, payload: "{}")]))
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
        Outgoing(seq: Int64(seq), msgID: "m\(seq)", payload: ByteBuffer(string: "\(seq)"), dup: dup, token: 0)
    }

    /// The PUBLISH of `payload` the machine sends to "rid" with `packetID`.
    private static func publish(packetID: UInt16, payload: String, dup: Bool = false) -> MQTTPacket {
        .publish(
            .init(topic: "herald/rid/push", payload: ByteBuffer(string: payload), qos: .atLeastOnce, packetID: packetID, retain: false, dup: dup)
        )
    }

    /// The PUBLISHes of the messages with `seqs` (see ``message(seq:dup:)``), their packet
    /// ids counting from `firstPacketID`.
    private static func publishes(_ seqs: [Int], from firstPacketID: UInt16 = 1, dup: Bool = false) -> [MQTTPacket] {
        zip(seqs, firstPacketID...).map { seq, packetID in publish(packetID: packetID, payload: "\(seq)", dup: dup) }
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

    private struct Unexpected: Error {
        var packet: String
    }
}
