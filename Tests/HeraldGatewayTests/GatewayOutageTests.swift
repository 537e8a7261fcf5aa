import Foundation
import HeraldCore
import HeraldGateway
import HeraldMQTT
import HeraldStore
import HeraldTestSupport
import ServiceLifecycle
import Testing

@Suite struct GatewayOutageTests {
    /// With PostgreSQL down, a CONNECT whose credentials can't be checked is answered with
    /// CONNACK 3 (server unavailable) once the check's time limit passes, not held for as
    /// long as the pool keeps trying.
    @Test func aCONNECTDuringADatabaseOutageGetsServerUnavailableWithinTheTimeLimit() async throws {
        try await TestDatabase.withDedicatedCluster { cluster in
            try await TestDatabase.withStores(cluster.url) { store in
                let app = try await store.api.createApp(name: "Outage")
                let registered = try await store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .android))
                var configuration = GatewayConfiguration.test()
                configuration.authTimeout = .seconds(1)
                let gateway = Gateway(configuration: configuration, store: store.gateway, logger: TestDatabase.logger)
                let group = ServiceGroup(services: [gateway], logger: TestDatabase.logger)
                let running = Task { try await group.run() }
                let address = try await gateway.localAddress
                await cluster.stop(logger: TestDatabase.logger)

                let (device, code) = try await TestMQTTClient.connect(
                    to: address,
                    clientID: registered.registrationID,
                    username: app.app.appKey,
                    password: registered.deviceSecret
                )
                #expect(code == .serverUnavailable)
                #expect(try await device.waitForClose())
                await group.triggerGracefulShutdown()
                try await running.value
            }
        }
    }
}
