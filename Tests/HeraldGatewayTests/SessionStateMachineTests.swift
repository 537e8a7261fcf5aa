import HeraldMQTT
import HeraldStore
import NIOCore
import Testing

@testable import HeraldGateway

/// Inbox positions on one connection when concurrent fan-outs hand messages to the gateway
/// out of seq order: every message is sent once, and "acknowledged through" never moves
/// past a message the device hasn't acknowledged.
@Suite struct SessionStateMachineTests {
    @Test func lateLowerSeqsAreSentAndHoldBackTheAcknowledgedPosition() throws {
        var machine = try Self.activeMachine()
        let sent = [7, 5, 6].map { machine.deliver(Self.message(seq: $0)) }
        let packetIDs = try sent.map { action in
            guard case .send(let packets) = action, case .publish(let publish) = try #require(packets.first) else {
                Issue.record("expected a PUBLISH, got \(action)")
                return UInt16(0)
            }
            return try #require(publish.packetID)
        }
        #expect(packetIDs.count == 3)
        // The device acknowledges in the order it received: 7, 5, 6.
        #expect(Self.ackedThrough(machine.packetReceived(.pubAck(packetID: packetIDs[0]))) == .some(nil))
        #expect(Self.ackedThrough(machine.packetReceived(.pubAck(packetID: packetIDs[1]))) == .some(5))
        #expect(Self.ackedThrough(machine.packetReceived(.pubAck(packetID: packetIDs[2]))) == .some(7))
    }

    @Test func aSeqArrivingAfterAHigherOneWasAcknowledgedIsStillSent() throws {
        var machine = try Self.activeMachine()
        guard case .send(let first) = machine.deliver(Self.message(seq: 9)), case .publish(let publish) = first.first else {
            Issue.record("seq 9 is sent")
            return
        }
        #expect(Self.ackedThrough(machine.packetReceived(.pubAck(packetID: try #require(publish.packetID)))) == .some(9))
        guard case .send(let late) = machine.deliver(Self.message(seq: 4)), case .publish(let latePublish) = late.first else {
            Issue.record("seq 4 is sent though 9 was acknowledged")
            return
        }
        // Its acknowledgement doesn't move the position back.
        #expect(Self.ackedThrough(machine.packetReceived(.pubAck(packetID: try #require(latePublish.packetID)))) == .some(nil))
    }

    @Test func aSecondCopyOfAQueuedOrSentSeqIsDropped() throws {
        var machine = try Self.activeMachine()
        guard case .send = machine.deliver(Self.message(seq: 3)) else {
            Issue.record("the first copy is sent")
            return
        }
        guard case .none = machine.deliver(Self.message(seq: 3)) else {
            Issue.record("the second copy is dropped")
            return
        }
    }

    private static func activeMachine() throws -> MQTTSessionStateMachine {
        var machine = MQTTSessionStateMachine(maxInFlight: 8, maxQueued: 100)
        _ = machine.packetReceived(.connect(.init(clientID: "rid", username: "app", password: ByteBuffer(string: "secret"))))
        _ = machine.authenticated(.accepted(GatewayDevice(deviceID: 1, appID: 1, registrationID: "rid")))
        _ = machine.replayLoaded([])
        return machine
    }

    private static func message(seq: Int) -> Outgoing {
        Outgoing(seq: Int64(seq), messageID: "m\(seq)", payload: ByteBuffer(string: "{}"), dup: false, token: 0)
    }

    /// nil: not an acknowledgement; .some(nil): acknowledged, position unmoved.
    private static func ackedThrough(_ action: MQTTSessionStateMachine.Action) -> Int64?? {
        guard case .acknowledged(_, let through, _) = action else { return nil }
        return .some(through)
    }
}
