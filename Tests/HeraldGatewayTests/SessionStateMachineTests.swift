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
        guard case .loadInbox(let first) = machine.deliver(Self.message(seq: 7)), first.isEmpty else {
            Issue.record("seq 7 skips 5 and 6: the inbox is loaded, nothing sent")
            return
        }
        guard case .none = machine.deliver(Self.message(seq: 5)) else {
            Issue.record("while the inbox loads, stored messages wait")
            return
        }
        let action = machine.replayLoaded([5, 6, 7].map { Self.message(seq: $0, dup: true) }, through: 7)
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
        let packetIDs = try Self.published(machine.replayLoaded([1, 2, 3].map { Self.message(seq: $0, dup: true) }, through: 3))
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
        let loaded = try Self.published(machine.replayLoaded([1, 2, 3].map { Self.message(seq: $0, dup: true) }, through: 3))
        #expect(loaded.map(\.seq) == [2, 3])
    }

    @Test func aLoadCutShortByItsLimitIsFollowedByAnother() throws {
        var machine = try Self.activeMachine(through: 0)
        guard case .loadInbox = machine.deliver(Self.message(seq: 3)) else {
            Issue.record("seq 3 skips 1 and 2")
            return
        }
        guard case .loadInbox(let sent) = machine.replayLoaded([Self.message(seq: 1, dup: true)], through: 1) else {
            Issue.record("2 is still missing: load again")
            return
        }
        #expect(try Self.published(.send(sent)).map(\.seq) == [1])
        let rest = try Self.published(machine.replayLoaded([2, 3].map { Self.message(seq: $0, dup: true) }, through: 3))
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

    private static func activeMachine(through: Int64) throws -> MQTTSessionStateMachine {
        var machine = MQTTSessionStateMachine(maxInFlight: 8, maxQueued: 100)
        _ = machine.packetReceived(.connect(.init(clientID: "rid", username: "app", password: ByteBuffer(string: "secret"))))
        _ = machine.authenticated(.accepted(GatewayDevice(deviceID: 1, appID: 1, registrationID: "rid")))
        _ = machine.replayLoaded([], through: through)
        return machine
    }

    private static func message(seq: Int, dup: Bool = false) -> Outgoing {
        Outgoing(seq: Int64(seq), messageID: "m\(seq)", payload: ByteBuffer(string: "\(seq)"), dup: dup, token: 0)
    }

    /// The PUBLISHes an action sends: packet id and the seq named by the message id.
    private static func published(_ action: MQTTSessionStateMachine.Action) throws -> [(packetID: UInt16, seq: Int64)] {
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
        guard case .acknowledged(_, let through, _) = action else { return nil }
        return .some(through)
    }

    private struct Unexpected: Error {
        var packet: String
    }
}
