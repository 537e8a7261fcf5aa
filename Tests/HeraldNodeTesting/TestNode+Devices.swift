import Foundation
import HeraldAPNsSandbox
import HeraldGateway
import HeraldKit
import HeraldMQTT
import HeraldTestSupport
import NIOConcurrencyHelpers
import NIOCore

extension TestNode {
    /// An APNs device token made from `n`.
    public static func token(_ n: Int) -> String {
        String(format: "%064x", n + 0xABC000)
    }

    /// Registers a device of the test's app through the API, as the SDK does (reporting
    /// `timeZone`, none by default).
    public func register(
        platform: String = "ios",
        token: String? = nil,
        alias: String? = nil,
        tags: [String] = [],
        timeZone: String? = nil,
        language: String? = nil
    ) async throws
        -> DeviceCredentials
    {
        let http = HeraldAPIClient(baseURL: apiURL, appKey: appKey)
        let credentials = try await http.register(
            platform: platform,
            apnsToken: token,
            apnsEnvironment: token == nil ? nil : "sandbox",
            timeZone: timeZone,
            language: language
        )
        if let alias { try await http.setAlias(alias, credentials: credentials) }
        if !tags.isEmpty { try await http.updateTags(add: tags, credentials: credentials) }
        return credentials
    }

    /// An SDK client for `credentials`, on this node's gateway (or `port`).
    public func client(_ credentials: DeviceCredentials, port: Int? = nil, tls: HeraldClient.Configuration.TLS? = nil) -> HeraldClient {
        HeraldClient(
            configuration: .init(
                host: "127.0.0.1",
                port: port ?? gatewayPort,
                appKey: appKey,
                keepAlive: 30,
                backoff: Backoff(base: .milliseconds(100)),
                tls: tls
            ),
            credentials: credentials,
            logger: TestDatabase.logger
        )
    }

    /// Runs an SDK client for `body`, once it is connected and the gateway has it.
    public func online<Result: Sendable>(
        _ credentials: DeviceCredentials,
        _ body: @Sendable (EventReader) async throws -> Result
    ) async throws -> Result {
        let client = client(credentials)
        let reader = EventReader(client)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            guard try await reader.next(where: { $0 == .connected }) != nil else {
                throw TestFailure("device did not connect")
            }
            try await waitUntil("the gateway to register \(credentials.registrationID)") { gateway.isConnected(credentials.registrationID) }
            return try await body(reader)
        }
    }

    /// A raw MQTT connection as `device`, registered with the gateway: unlike the SDK, it
    /// acknowledges only what the test tells it to.
    public func rawConnection(_ device: DeviceCredentials) async throws -> TestMQTTClient {
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: gatewayPort)
        let (mqtt, code) = try await TestMQTTClient.connect(
            to: address,
            clientID: device.registrationID,
            username: appKey,
            password: device.deviceSecret
        )
        guard code == .accepted else { throw TestFailure("CONNECT refused with \(code.map { "\($0)" } ?? "no answer")") }
        try await waitUntil("the gateway to register \(device.registrationID)") { gateway.isConnected(device.registrationID) }
        return mqtt
    }

    /// What the APNs sandbox received for `token`.
    public func apnsReceived(_ token: String) -> [RecordedNotification] {
        sandbox.notifications.filter { $0.deviceToken == token }
    }

    /// Waits until the sandbox has `count` notifications for `token` (of those `matching`),
    /// and returns those (fewer after `timeout`).
    public func waitForAPNs(
        _ token: String,
        count: Int = 1,
        matching: @Sendable (RecordedNotification) -> Bool = { _ in true },
        timeout: Duration = .seconds(10)
    ) async throws -> [RecordedNotification] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let received = apnsReceived(token).filter(matching)
            if received.count >= count { return received }
            try await Task.sleep(for: .milliseconds(20))
        }
        return apnsReceived(token).filter(matching)
    }

    /// Waits until devices have published `count` events in all.
    public func waitForDeviceEvents(_ count: Int, timeout: Duration = .seconds(5)) async throws {
        let deadline = ContinuousClock.now + timeout
        while deviceEvents.withLockedValue({ $0.count }) < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

extension RecordedNotification {
    /// The payload APNs was sent, as typed JSON (``JSON/null`` if it wasn't JSON).
    public var json: JSON {
        (try? JSONDecoder().decode(JSON.self, from: Data(payload))) ?? .null
    }
}
