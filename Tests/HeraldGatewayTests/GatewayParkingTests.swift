import Foundation
import HeraldCore
import HeraldGateway
import HeraldMQTT
import HeraldStore
import HeraldTestSupport
import NIOCore
import Testing

/// Idle connections parked without a channel (``ParkingLot``), over real sockets: what a
/// device sees must not change, whatever happens to it while parked.
@Suite struct GatewayParkingTests {
    /// Parks after 100 ms of quiet (the sweep that parks runs each second).
    static let parking = GatewayConfiguration.test(minimumKeepAlive: .seconds(1), parkAfter: .milliseconds(100))

    /// Waits until `count` connections are parked.
    static func parked(_ test: GatewayTest, _ count: Int) async throws -> Bool {
        for _ in 0..<100 {
            if test.gateway.parkedCount == count { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test func anIdleConnectionParksAndItsPingsAreAnsweredWhileParked() async throws {
        try await GatewayTest.run(configuration: Self.parking) { test in
            let (device, _, client) = try await test.connectedDevice()
            // Pings don't keep a connection from parking: it pings more often than it
            // would park after, and parks.
            for _ in 0..<30 where test.gateway.parkedCount == 0 {
                try await client.send(.pingReq)
                #expect(try await client.next() == .pingResp)
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await Self.parked(test, 1))
            for _ in 0..<3 {
                try await client.send(.pingReq)
                #expect(try await client.next() == .pingResp)
            }
            #expect(test.gateway.parkedCount == 1)
            #expect(test.gateway.isConnected(device.registrationID))
        }
    }

    @Test func aDeliveryBringsAParkedConnectionBackAndItParksAgain() async throws {
        try await GatewayTest.run(configuration: Self.parking) { test in
            let (device, _, client) = try await test.connectedDevice()
            for round in 1...3 {
                #expect(try await Self.parked(test, 1))
                async let outcome = test.gateway.deliver(test.message("m\(round)", id: "m\(round)"), to: device)
                let publish = try #require(try await client.nextPublish())
                #expect(String(buffer: publish.payload) == "m\(round)")
                #expect(try await outcome == .acknowledged)
                #expect(try await test.eventually { try await test.store.acknowledgedSeq(deviceID: device.deviceID) == Int64(round) })
            }
            #expect(try await test.store.pendingMessages(deviceID: device.deviceID).isEmpty)
            // A message without a seq (time to live 0) too.
            #expect(try await Self.parked(test, 1))
            async let outcome = test.gateway.deliver(test.message("now", id: "now", ttl: .zero), to: device)
            #expect(try await client.nextPublish().map { String(buffer: $0.payload) } == "now")
            #expect(try await outcome == .acknowledged)
        }
    }

    @Test func aParkedConnectionSendingMoreThanAPingIsBroughtBackAndServed() async throws {
        try await GatewayTest.run(configuration: Self.parking) { test in
            let (device, _, client) = try await test.connectedDevice()
            #expect(try await Self.parked(test, 1))
            let topic = "herald/\(device.registrationID)/events"
            try await client.send(.publish(.init(topic: topic, payload: ByteBuffer(string: "opened"), qos: .atLeastOnce, packetID: 7)))
            #expect(try await client.next() == .pubAck(packetID: 7))
            #expect(try await test.eventually { test.events.withLockedValue { $0 } == ["\(device.registrationID):opened"] })
            try await client.send(
                .subscribe(.init(packetID: 8, subscriptions: [.init(topicFilter: "herald/\(device.registrationID)/push", qos: .atLeastOnce)]))
            )
            #expect(try await client.next() == .subAck(.init(packetID: 8, returnCodes: [.grantedQoS1])))
        }
    }

    @Test func aParkedConnectionThatFallsSilentIsClosedByItsKeepalive() async throws {
        try await GatewayTest.run(configuration: Self.parking) { test in
            // Keepalive 3 s: closed after 4.5 s of silence; parked well before.
            let (device, _, client) = try await test.connectedDevice(keepAlive: 3)
            #expect(try await Self.parked(test, 1))
            #expect(try await client.waitForClose(timeout: .seconds(10)))
            #expect(try await test.eventually { !test.gateway.isConnected(device.registrationID) })
            #expect(test.gateway.parkedCount == 0)
        }
    }

    @Test func aParkedConnectionWhosePeerClosesIsGone() async throws {
        try await GatewayTest.run(configuration: Self.parking) { test in
            let (device, _, client) = try await test.connectedDevice()
            #expect(try await Self.parked(test, 1))
            await client.close()
            #expect(try await test.eventually { !test.gateway.isConnected(device.registrationID) })
            #expect(test.gateway.parkedCount == 0)
        }
    }

    @Test func garbageFromAParkedConnectionClosesItAndNoOther() async throws {
        try await GatewayTest.run(configuration: Self.parking) { test in
            let (bad, _, badClient) = try await test.connectedDevice()
            let (good, _, goodClient) = try await test.connectedDevice()
            #expect(try await Self.parked(test, 2))
            try await badClient.sendRaw([0xFF, 0xFF, 0xFF])
            #expect(try await badClient.waitForClose())
            #expect(try await test.eventually { !test.gateway.isConnected(bad.registrationID) })
            #expect(test.gateway.isConnected(good.registrationID))
            #expect(test.gateway.parkedCount == 1)
            async let outcome = test.gateway.deliver(test.message("still here", id: "g1"), to: good)
            #expect(try await goodClient.nextPublish().map { String(buffer: $0.payload) } == "still here")
            #expect(try await outcome == .acknowledged)
        }
    }

    @Test func aNewConnectionTakesOverAParkedOne() async throws {
        try await GatewayTest.run(configuration: Self.parking) { test in
            let (device, secret, first) = try await test.connectedDevice()
            #expect(try await Self.parked(test, 1))
            let second = try await test.connect(device, secret: secret)
            #expect(try await first.waitForClose())
            async let outcome = test.gateway.deliver(test.message("to the new one", id: "t1"), to: device)
            #expect(try await second.nextPublish().map { String(buffer: $0.payload) } == "to the new one")
            #expect(try await outcome == .acknowledged)
        }
    }

    @Test func aStoredMessageWhileParkedElsewhereIsLoadedWhenTold() async throws {
        try await GatewayTest.run(configuration: Self.parking) { test in
            let (device, _, client) = try await test.connectedDevice()
            #expect(try await Self.parked(test, 1))
            // Another node stored it and told this one (its NOTIFY): the parked connection
            // comes back and loads its inbox.
            _ = try await test.store.gateway.enqueue(
                deviceID: device.deviceID,
                msgID: "elsewhere",
                payload: Array("from another node".utf8),
                expiresAt: Date().addingTimeInterval(3600)
            )
            test.gateway.inboxChanged(registrationID: device.registrationID)
            #expect(try await client.nextPublish().map { String(buffer: $0.payload) } == "from another node")
            #expect(try await test.eventually { try await test.store.acknowledgedSeq(deviceID: device.deviceID) == 1 })
        }
    }

    @Test func withoutParkingAConnectionKeepsItsChannel() async throws {
        try await GatewayTest.run(configuration: .test(parkAfter: nil)) { test in
            let (device, _, _) = try await test.connectedDevice()
            try await Task.sleep(for: .seconds(2))
            #expect(test.gateway.parkedCount == 0)
            #expect(test.gateway.isConnected(device.registrationID))
        }
    }
}
