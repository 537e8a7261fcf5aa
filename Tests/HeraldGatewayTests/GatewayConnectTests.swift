import Foundation
import HeraldGateway
import HeraldMQTT
import HeraldStore
import HeraldTestSupport
import NIOCore
import Testing

@Suite struct GatewayConnectTests {
    @Test func aDeviceWithItsCredentialsIsAccepted() async throws {
        try await GatewayTest.run { test in
            let (device, secret) = try await test.device()
            let (client, code) = try await TestMQTTClient.connect(
                to: test.address,
                clientID: device.registrationID,
                username: test.appKey,
                password: secret
            )
            #expect(code == .accepted)
            #expect(try await test.eventually { test.gateway.isConnected(device.registrationID) })
            await client.close()
        }
    }

    /// A registration id that doesn't exist, one of another app and a wrong secret get the
    /// same answer, so CONNECTs tell a stranger nothing about which ids exist.
    @Test func refusalsUseTheMQTTReturnCodes() async throws {
        try await GatewayTest.run { test in
            let (device, secret) = try await test.device()
            let wrongPassword = try await TestMQTTClient.connect(
                to: test.address,
                clientID: device.registrationID,
                username: test.appKey,
                password: "nope"
            )
            #expect(wrongPassword.1 == .badUsernameOrPassword)
            #expect(try await wrongPassword.0.waitForClose())

            let unknown = try await TestMQTTClient.connect(
                to: test.address,
                clientID: "00000000000000000000",
                username: test.appKey,
                password: secret
            )
            #expect(unknown.1 == .badUsernameOrPassword)

            let other = try await test.store.api.createApp(name: "Other")
            let wrongApp = try await TestMQTTClient.connect(
                to: test.address,
                clientID: device.registrationID,
                username: other.app.appKey,
                password: secret
            )
            #expect(wrongApp.1 == .badUsernameOrPassword)

            let malformed = try await TestMQTTClient.connect(to: test.address, clientID: "not-an-id", username: test.appKey, password: secret)
            #expect(malformed.1 == .badUsernameOrPassword)

            let noPassword = try await TestMQTTClient.connect(to: test.address, clientID: device.registrationID, username: nil, password: nil)
            #expect(noPassword.1 == .badUsernameOrPassword)
            #expect(!test.gateway.isConnected(device.registrationID))
        }
    }

    /// Guessing is braked: past the free failures, wrong credentials from one address (here
    /// at ids that don't exist) are answered after a growing delay, while the right secret
    /// is let in without one.
    @Test func failedConnectsFromOneAddressAreAnsweredLaterButTheRightSecretIsNot() async throws {
        var configuration = GatewayConfiguration.test()
        configuration.authThrottle = .init(freeFailures: 1, initialDelay: .seconds(3), maximumDelay: .seconds(60))
        try await GatewayTest.run(configuration: configuration) { test in
            let (device, secret) = try await test.device()
            let free = try await TestMQTTClient.connect(to: test.address, clientID: "00000000000000000001", username: test.appKey, password: "guess")
            #expect(free.1 == .badUsernameOrPassword)
            let clock = ContinuousClock()
            let started = clock.now
            let (braked, code) = try await TestMQTTClient.connect(
                to: test.address,
                clientID: "00000000000000000002",
                username: test.appKey,
                password: "guess"
            )
            // The CONNACK waits past the test client's usual 5 s: give it longer.
            let answer = code == nil ? try await braked.next(timeout: .seconds(10)) : .connAck(.init(returnCode: code!))
            #expect(answer == .connAck(.init(returnCode: .badUsernameOrPassword)))
            #expect(clock.now - started >= .seconds(3))

            // A failure now would wait 6 s; the right secret is answered within the client's 5 s.
            let (client, accepted) = try await TestMQTTClient.connect(
                to: test.address,
                clientID: device.registrationID,
                username: test.appKey,
                password: secret
            )
            #expect(accepted == .accepted)
            await client.close()
        }
    }

    @Test func anUnsupportedProtocolLevelGetsReturnCode1() async throws {
        try await GatewayTest.run { test in
            let client = try await TestMQTTClient.connect(to: test.address)
            // CONNECT with protocol name "MQIsdp" level 3 (MQTT 3.1).
            let body: [UInt8] = [0x00, 0x06] + Array("MQIsdp".utf8) + [0x03, 0x02, 0x00, 0x3C, 0x00, 0x01, 0x61]
            try await client.sendRaw([0x10, UInt8(body.count)] + body)
            guard case .connAck(let ack) = try await client.next() else {
                Issue.record("no CONNACK")
                return
            }
            #expect(ack.returnCode == .unacceptableProtocolVersion)
            #expect(try await client.waitForClose())
        }
    }

    @Test func aSecondConnectionWithTheSameClientIDTakesOver() async throws {
        try await GatewayTest.run { test in
            let (device, secret, first) = try await test.connectedDevice()
            let second = try await test.connect(device, secret: secret)
            #expect(try await first.waitForClose())
            #expect(second.channel.isActive)
            async let outcome = test.gateway.deliver(test.message("to the new one"), to: device)
            #expect(try await second.nextPublish().map { String(buffer: $0.payload) } == "to the new one")
            #expect(try await outcome == .acknowledged)
        }
    }

    @Test func aConnectionThatNeverSendsCONNECTIsClosed() async throws {
        try await GatewayTest.run(configuration: .test(connectTimeout: .seconds(1))) { test in
            let client = try await TestMQTTClient.connect(to: test.address)
            #expect(try await client.waitForClose(timeout: .seconds(10)))
        }
    }

    @Test func aCONNECTTrickledAByteAtATimeIsClosedAtTheConnectTimeout() async throws {
        try await GatewayTest.run(configuration: .test(connectTimeout: .seconds(1))) { test in
            let client = try await TestMQTTClient.connect(to: test.address)
            // A CONNECT's first bytes, one every 300 ms: never silent for the timeout.
            let start = ContinuousClock.now
            var closed = false
            for byte: UInt8 in [0x10, 0x7F, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3C, 0x00, 0x14] {
                do {
                    try await client.sendRaw([byte])
                } catch {
                    closed = true
                    break
                }
                if !client.channel.isActive {
                    closed = true
                    break
                }
                try await Task.sleep(for: .milliseconds(300))
            }
            if !closed { closed = try await client.waitForClose(timeout: .seconds(5)) }
            #expect(closed, "a trickled CONNECT held its connection open for \(start.duration(to: .now))")
            #expect(start.duration(to: .now) < .seconds(4.5))
        }
    }

    @Test func aSilentClientIsClosedAfterOneAndAHalfKeepalives() async throws {
        try await GatewayTest.run(configuration: .test(minimumKeepAlive: .seconds(1))) { test in
            let (_, _, client) = try await test.connectedDevice(keepAlive: 1)
            #expect(try await client.waitForClose(timeout: .seconds(10)))
        }
    }

    @Test func pingsKeepAConnectionAlive() async throws {
        try await GatewayTest.run(configuration: .test(minimumKeepAlive: .seconds(1))) { test in
            let (_, _, client) = try await test.connectedDevice(keepAlive: 1)
            for _ in 0..<8 {
                try await client.send(.pingReq)
                #expect(try await client.next() == .pingResp)
                try await Task.sleep(for: .milliseconds(400))
            }
            #expect(client.channel.isActive)
        }
    }

    @Test func malformedInputClosesOnlyThatConnection() async throws {
        try await GatewayTest.run { test in
            let (goodDevice, _, good) = try await test.connectedDevice()
            let (_, _, bad) = try await test.connectedDevice()
            try await bad.sendRaw([0xF0, 0x00])  // reserved packet type 15
            #expect(try await bad.waitForClose())
            let outcome = try await test.gateway.deliver(test.message("still here"), to: goodDevice)
            let publish = try await good.nextPublish()
            #expect(publish.map { String(buffer: $0.payload) } == "still here")
            _ = outcome
        }
    }

    @Test func packetsBeforeCONNECTAndQoS2AreProtocolViolations() async throws {
        try await GatewayTest.run { test in
            let early = try await TestMQTTClient.connect(to: test.address)
            try await early.send(.pingReq)
            #expect(try await early.waitForClose())

            let (device, _, client) = try await test.connectedDevice()
            try await client.send(
                .publish(.init(topic: "herald/\(device.registrationID)/events", payload: ByteBuffer(string: "x"), qos: .exactlyOnce, packetID: 1))
            )
            #expect(try await client.waitForClose())
        }
    }

    @Test func aClientMaySubscribeToItsOwnTopicsOnly() async throws {
        try await GatewayTest.run { test in
            let (device, _, client) = try await test.connectedDevice()
            try await client.send(
                .subscribe(
                    .init(
                        packetID: 7,
                        subscriptions: [
                            .init(topicFilter: "herald/\(device.registrationID)/push", qos: .exactlyOnce),
                            .init(topicFilter: "herald/someone-else/push", qos: .atLeastOnce),
                            .init(topicFilter: "#", qos: .atMostOnce),
                        ]
                    )
                )
            )
            #expect(try await client.next() == .subAck(.init(packetID: 7, returnCodes: [.grantedQoS1, .failure, .failure])))
        }
    }

    @Test func deviceEventsAreAcknowledgedAndHandedOn() async throws {
        try await GatewayTest.run { test in
            let (device, _, client) = try await test.connectedDevice()
            try await client.send(
                .publish(
                    .init(
                        topic: "herald/\(device.registrationID)/events",
                        payload: ByteBuffer(string: #"{"event":"opened"}"#),
                        qos: .atLeastOnce,
                        packetID: 9
                    )
                )
            )
            #expect(try await client.next() == .pubAck(packetID: 9))
            #expect(test.events.withLockedValue { $0 } == [#"\#(device.registrationID):{"event":"opened"}"#])
            // Publishing anywhere else is a violation.
            try await client.send(.publish(.init(topic: "herald/x/events", payload: ByteBuffer(), qos: .atMostOnce)))
            #expect(try await client.waitForClose())
        }
    }
}
