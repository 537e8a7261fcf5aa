import HeraldGateway
import HeraldStore
import HeraldTestSupport
import NIOCore
import Testing

@Suite struct GatewayBroadcastTests {
    @Test func aBroadcastIsStoredForEveryDeviceAndDeliveredToTheConnectedOnes() async throws {
        try await GatewayTest.run { test in
            var connected: [(device: DeviceIdentity, client: TestMQTTClient)] = []
            for _ in 0..<3 {
                let (device, _, client) = try await test.connectedDevice()
                connected.append((device, client))
            }
            let (offline, secret) = try await test.device()
            let devices = connected.map(\.device) + [offline]
            async let outcomes = test.gateway.deliver(test.message("to everyone", id: "b1"), to: devices)
            for (_, client) in connected {
                #expect(try await client.nextPublish().map { String(buffer: $0.payload) } == "to everyone")
            }
            #expect(try await outcomes == [.acknowledged, .acknowledged, .acknowledged, .notConnected])
            let late = try await test.connect(offline, secret: secret)
            #expect(try await late.nextPublish().map { String(buffer: $0.payload) } == "to everyone")
        }
    }
}
