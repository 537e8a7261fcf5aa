import HeraldMQTT
import HeraldStore
import NIOCore
import Testing

@testable import HeraldGateway

/// What a parked connection keeps: a session is parkable only with nothing under way, and
/// one brought back carries on exactly where it stopped.
@Suite struct ParkingStateTests {
    private static func machine() -> MQTTSessionStateMachine {
        var machine = MQTTSessionStateMachine(maxInFlight: 2, maxQueued: 100)
        _ = machine.packetReceived(.connect(.init(clientID: "rid", username: "app", password: ByteBuffer(string: "secret"))))
        _ = machine.authenticated(.accepted(DeviceIdentity(deviceID: 1, appID: 1, registrationID: "rid")))
        return machine
    }

    private static func message(seq: Int64?) -> Outgoing {
        Outgoing(seq: seq, msgID: "m\(seq ?? 0)", payload: ByteBuffer(string: "x"), dup: false, token: 0)
    }

    @Test func onlyAnActiveSessionWithNothingUnderWayIsParkable() throws {
        var machine = MQTTSessionStateMachine(maxInFlight: 2, maxQueued: 100)
        #expect(machine.parkable == nil)  // awaiting CONNECT
        machine = Self.machine()
        #expect(machine.parkable == nil)  // its inbox loading
        _ = machine.replayLoaded([], through: 3, complete: true)
        #expect(machine.parkable == .init(nextPacketID: 1, ackedThrough: 0, knownThrough: 3, sentThrough: 0))

        _ = machine.deliver(Self.message(seq: 4))
        #expect(machine.parkable == nil)  // in flight
        _ = machine.packetReceived(.pubAck(packetID: 1))
        #expect(machine.parkable == .init(nextPacketID: 2, ackedThrough: 4, knownThrough: 4, sentThrough: 4))

        // A message without a seq in flight, then two behind a window of two: queued.
        for seq: Int64? in [nil, 5, 6] { _ = machine.deliver(Self.message(seq: seq)) }
        #expect(machine.parkable == nil)
        _ = machine.packetReceived(.pubAck(packetID: 2))
        _ = machine.packetReceived(.pubAck(packetID: 3))
        #expect(machine.parkable == nil)  // 6 still in flight
        _ = machine.packetReceived(.pubAck(packetID: 4))
        #expect(machine.parkable == .init(nextPacketID: 5, ackedThrough: 6, knownThrough: 6, sentThrough: 6))

        // The store has more than the connection took: not until it is loaded.
        #expect(machine.storeChanged() == .loadInbox(after: 6, sendFirst: []))
        #expect(machine.parkable == nil)
        _ = machine.replayLoaded([], through: 6, complete: true)
        #expect(machine.parkable != nil)

        _ = machine.close(.keepaliveExpired)
        #expect(machine.parkable == nil)
    }

    @Test func aSessionBroughtBackCarriesOnWhereItStopped() throws {
        let parked = MQTTSessionStateMachine.ParkedSession(nextPacketID: 65_535, ackedThrough: 9, knownThrough: 9, sentThrough: 9)
        var machine = MQTTSessionStateMachine(resuming: parked, registrationID: "rid", maxInFlight: 2, maxQueued: 100)
        #expect(machine.registrationID == "rid")
        #expect(machine.parkable == parked)
        // An old seq is already acknowledged; the next goes out with the next packet id,
        // wrapping past 65,535 to 1.
        #expect(machine.deliver(Self.message(seq: 9)) == .alreadyAcknowledged(Self.message(seq: 9)))
        let publish = { (packetID: UInt16) -> MQTTPacket in
            .publish(
                .init(topic: "herald/rid/push", payload: ByteBuffer(string: "x"), qos: .atLeastOnce, packetID: packetID, retain: false, dup: false)
            )
        }
        #expect(machine.deliver(Self.message(seq: 10)) == .send([publish(65_535)]))
        #expect(machine.deliver(Self.message(seq: 11)) == .send([publish(1)]))
        // A seq past the one after what it knows waits for the inbox, as before parking.
        #expect(machine.deliver(Self.message(seq: 13)) == .loadInbox(after: 11, sendFirst: []))
        #expect(machine.sentThrough == 11)
    }

    @Test(arguments: [
        ("0123456789abcdef0123", true),  // Herald's own
        ("0123456789abcdef012", true),  // JPush's 19
        ("0a1b2c3d4e5", true),  // JPush's 11
        ("0", true),
        ("00", true),
        ("0123456789abcdef01234567", true),  // 24, the most packed
        ("0123456789abcdef012345678", false),
        ("ABCDEF", false),
        ("device-1", false),
        ("", false),
    ])
    func registrationKeysPackHexIDsAndKeepTheRestAsStrings(id: String, packed: Bool) {
        let key = RegistrationKey(id)
        #expect(key.isPacked == packed)
        #expect(key.string == id)
        #expect(key == RegistrationKey(String(id)))
    }

    @Test func keysOfDifferentIDsDiffer() {
        let ids = ["0", "00", "000", "a", "0a", "a0", "ff", "0123456789abcdef0123", "0123456789abcdef0124", "123456789abcdef01230"]
        #expect(Set(ids.map(RegistrationKey.init)).count == ids.count)
    }
}
