import Foundation
import HeraldCore
import HeraldGateway
import HeraldMQTT
import HeraldStore
import HeraldTestSupport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// A gateway on 127.0.0.1 and a free port, on a fresh database with one app.
struct GatewayTest: Sendable {
    let gateway: Gateway
    let store: TestStores
    let address: SocketAddress
    let appKey: String
    let events: NIOLockedValueBox<[String]>

    static func run(
        configuration: GatewayConfiguration = .test(),
        _ body: @Sendable @escaping (GatewayTest) async throws -> Void
    ) async throws {
        try await TestDatabase.withStore { store in
            let events = NIOLockedValueBox<[String]>([])
            let gateway = Gateway(
                configuration: configuration,
                store: store.gateway,
                onDeviceEvent: { device, payload in events.withLockedValue { $0.append("\(device.registrationID):\(String(buffer: payload))") } },
                logger: TestDatabase.logger
            )
            let app = try await store.api.createApp(name: "Gateway Test")
            let group = ServiceGroup(services: [gateway], logger: TestDatabase.logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                do {
                    let test = GatewayTest(
                        gateway: gateway,
                        store: store,
                        address: try await gateway.localAddress,
                        appKey: app.app.appKey,
                        events: events
                    )
                    try await body(test)
                    await group.triggerGracefulShutdown()
                } catch {
                    await group.triggerGracefulShutdown()
                    throw error
                }
                try await tasks.waitForAll()
            }
        }
    }

    /// Registers a device; returns its gateway identity and secret.
    func device(platform: Platform = .android) async throws -> (device: DeviceIdentity, secret: String) {
        let registered = try await store.api.devices.register(appKey: appKey, DeviceRegistration(platform: platform))
        let device = try await store.gateway.device(registrationID: registered.registrationID)!
        return (device, registered.deviceSecret)
    }

    /// A connected, authenticated client for a new device.
    func connectedDevice(keepAlive: UInt16 = 60) async throws -> (device: DeviceIdentity, secret: String, client: TestMQTTClient) {
        let (device, secret) = try await self.device()
        let client = try await connect(device, secret: secret, keepAlive: keepAlive)
        return (device, secret, client)
    }

    func connect(_ device: DeviceIdentity, secret: String, keepAlive: UInt16 = 60) async throws -> TestMQTTClient {
        let (client, code) = try await TestMQTTClient.connect(
            to: address,
            clientID: device.registrationID,
            username: appKey,
            password: secret,
            keepAlive: keepAlive
        )
        guard code == .accepted else { throw TestFailure("CONNECT refused: \(String(describing: code))") }
        // The session is registered right after the CONNACK; wait until it is.
        for _ in 0..<200 where !gateway.isConnected(device.registrationID) { try await Task.sleep(for: .milliseconds(5)) }
        return client
    }

    func message(_ text: String, id: String = UUID().uuidString, ttl: Duration = .seconds(3600)) -> GatewayMessage {
        GatewayMessage(msgID: id, payload: ByteBuffer(string: text), timeToLive: ttl)
    }

    /// Polls until `condition` holds (acknowledgements are written in batches).
    func eventually(_ condition: @Sendable () async throws -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension GatewayConfiguration {
    /// A gateway on 127.0.0.1 and a free port.
    static func test(
        connectTimeout: Duration = .seconds(5),
        minimumKeepAlive: Duration = .seconds(10),
        maxInFlight: Int = 32,
        maxQueued: Int = 1000,
        parkAfter: Duration? = .seconds(10)
    ) -> Self {
        GatewayConfiguration(
            host: "127.0.0.1",
            port: 0,
            connectTimeout: connectTimeout,
            minimumKeepAlive: minimumKeepAlive,
            maxInFlight: maxInFlight,
            maxQueued: maxQueued,
            parkAfter: parkAfter
        )
    }
}
