import HeraldMQTT
import HeraldStore
import NIOCore
import Testing

@testable import HeraldGateway

/// The state machine's answers to a device's packets and to the credentials check,
/// compared whole: the CONNECT, the session's own packets, and what closes the connection.
@Suite struct SessionStateMachinePacketTests {
    @Test func aCONNECTWithCredentialsIsCheckedWithItsKeepAlive() {
        var machine = Self.machine()
        let connect = MQTTPacket.connect(.init(clientID: "rid", keepAlive: 30, username: "app", password: ByteBuffer(string: "secret")))
        #expect(machine.packetReceived(connect) == .authenticate(clientID: "rid", username: "app", password: "secret", keepAlive: 30))
    }

    @Test func aCONNECTWithoutCredentialsOrClientIDIsRefusedWithItsReturnCode() {
        var withoutPassword = Self.machine()
        #expect(
            withoutPassword.packetReceived(.connect(.init(clientID: "rid", username: "app")))
                == .sendAndClose(.connAck(.init(returnCode: .badUsernameOrPassword)), .authenticationFailed)
        )
        var withoutID = Self.machine()
        #expect(
            withoutID.packetReceived(.connect(.init(clientID: "", username: "app", password: ByteBuffer(string: "secret"))))
                == .sendAndClose(.connAck(.init(returnCode: .identifierRejected)), .authenticationFailed)
        )
        #expect(!withoutPassword.isOpen && !withoutID.isOpen)
    }

    @Test func anythingButCONNECTBeforeTheCONNACKIsAProtocolViolation() {
        var awaitingConnect = Self.machine()
        #expect(awaitingConnect.packetReceived(.pingReq) == .close(.protocolViolation))
        var authenticating = Self.machine()
        _ = authenticating.packetReceived(Self.connect)
        #expect(authenticating.packetReceived(.pingReq) == .close(.protocolViolation))
    }

    @Test func acceptedCredentialsStartTheSessionAndRefusedOnesAreAnsweredWithTheirCode() {
        var accepted = Self.machine()
        _ = accepted.packetReceived(Self.connect)
        #expect(accepted.authenticated(.accepted(Self.device)) == .acceptSession(registrationID: "rid"))
        #expect(accepted.registrationID == "rid")
        var refused = Self.machine()
        _ = refused.packetReceived(Self.connect)
        #expect(
            refused.authenticated(.refused(.serverUnavailable))
                == .sendAndClose(.connAck(.init(returnCode: .serverUnavailable)), .authenticationFailed)
        )
    }

    @Test func aSessionAnswersPingsAndGrantsSubscriptionsToItsOwnTopicsOnly() {
        var machine = Self.session()
        #expect(machine.packetReceived(.pingReq) == .send([.pingResp]))
        let subscribe = MQTTPacket.Subscribe(
            packetID: 3,
            subscriptions: [
                .init(topicFilter: "herald/rid/push", qos: .atLeastOnce),
                .init(topicFilter: "herald/rid/#", qos: .atMostOnce),
                .init(topicFilter: "herald/other/push", qos: .atLeastOnce),
            ]
        )
        #expect(
            machine.packetReceived(.subscribe(subscribe))
                == .send([.subAck(.init(packetID: 3, returnCodes: [.grantedQoS1, .grantedQoS0, .failure]))])
        )
        #expect(machine.packetReceived(.unsubscribe(.init(packetID: 4, topicFilters: ["herald/rid/push"]))) == .send([.unsubAck(packetID: 4)]))
    }

    @Test func deviceEventsAreHandedOnAndAQoS1OneIsAcknowledged() {
        var machine = Self.session()
        let payload = ByteBuffer(string: #"{"opened":"m1"}"#)
        let atMostOnce = MQTTPacket.Publish(topic: "herald/rid/events", payload: payload)
        #expect(machine.packetReceived(.publish(atMostOnce)) == .deviceEvent(payload, reply: nil))
        let atLeastOnce = MQTTPacket.Publish(topic: "herald/rid/events", payload: payload, qos: .atLeastOnce, packetID: 9)
        #expect(machine.packetReceived(.publish(atLeastOnce)) == .deviceEvent(payload, reply: .pubAck(packetID: 9)))
    }

    @Test func qoS2AnUnknownPUBACKAndOtherTopicsCloseTheConnection() {
        let payload = ByteBuffer(string: "{}")
        var exactlyOnce = Self.session()
        let qos2 = MQTTPacket.Publish(topic: "herald/rid/events", payload: payload, qos: .exactlyOnce, packetID: 1)
        #expect(exactlyOnce.packetReceived(.publish(qos2)) == .close(.unsupportedQoS))
        var unknownAck = Self.session()
        #expect(unknownAck.packetReceived(.pubAck(packetID: 7)) == .close(.protocolViolation))
        var otherTopic = Self.session()
        #expect(otherTopic.packetReceived(.publish(.init(topic: "herald/other/events", payload: payload))) == .close(.protocolViolation))
        // A closed connection does nothing more.
        #expect(otherTopic.packetReceived(.pingReq) == .none)
        #expect(otherTopic.close(.serverShutdown) == .none)
    }

    @Test func aDISCONNECTClosesTheConnectionAsTheClientsOwn() {
        var machine = Self.session()
        #expect(machine.packetReceived(.disconnect) == .close(.clientDisconnected))
        #expect(!machine.isOpen)
    }

    private static let connect = MQTTPacket.connect(.init(clientID: "rid", username: "app", password: ByteBuffer(string: "secret")))
    private static let device = DeviceIdentity(deviceID: 1, appID: 1, registrationID: "rid")

    private static func machine() -> MQTTSessionStateMachine {
        MQTTSessionStateMachine(maxInFlight: 8, maxQueued: 100)
    }

    /// A machine whose session is active, with nothing in its inbox.
    private static func session() -> MQTTSessionStateMachine {
        var machine = machine()
        _ = machine.packetReceived(connect)
        _ = machine.authenticated(.accepted(device))
        _ = machine.replayLoaded([], through: 0, complete: true)
        return machine
    }
}
