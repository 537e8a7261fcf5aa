import Foundation
import HeraldAPI
import HeraldGateway
import HeraldKit
import HeraldMQTT
import HeraldNode
import HeraldNodeTesting
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Prometheus
import Testing

extension TestNode {
    /// A notification as the gateway sends it, for a direct delivery.
    func notification(_ id: String, alert: String) -> GatewayMessage {
        GatewayMessage(
            msgID: id,
            payload: ByteBuffer(string: #"{"type":"notification","msg_id":"\#(id)","notification":{"alert":"\#(alert)"}}"#),
            timeToLive: .seconds(600)
        )
    }
}

/// The SDK against a whole node: the real API (over HTTP) and the real gateway (over MQTT).
@Suite struct ClientTests {
    @Test func theSDKConnectsOverTLSAndVerifiesTheGateway() async throws {
        let (certificate, key) = try TestCredentials.serverCertificate(dnsName: "localhost")
        let listener = GatewayConfiguration.TLSListener(host: "127.0.0.1", port: 0, certificateChainPEM: certificate, privateKeyPEM: key)
        let withTLS: @Sendable (inout HeraldNodeConfiguration) -> Void = { $0.gateway.tls = listener }
        try await TestNode.run(configure: withTLS) { test in
            let http = HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey)
            let credentials = try await http.register(platform: "linux")
            let tlsPort = try #require(try await test.gateway.tlsLocalAddress.port)
            let client = test.client(credentials, port: tlsPort, tls: .init(trustedCertificatesPEM: [certificate], serverName: "localhost"))
            let reader = EventReader(client)
            let running = Task { await client.run() }
            defer { running.cancel() }
            #expect(try await reader.next(where: { $0 == .connected }) == .connected)
            try await waitUntil("the gateway to register \(credentials.registrationID)") { test.gateway.isConnected(credentials.registrationID) }
            let device = try #require(try await test.stores.gateway.device(registrationID: credentials.registrationID))
            #expect(try await test.gateway.deliver(test.notification("t1", alert: "secure"), to: device) == .acknowledged)
            let isNotification: @Sendable (HeraldEvent) -> Bool = { if case .notification = $0 { true } else { false } }
            let event = try await reader.next(where: isNotification)
            guard case .notification(let notification) = event else { throw ClientTestFailure("no notification over TLS: \(reader.all)") }
            #expect(notification.alert == "secure")

            // A client that doesn't trust the gateway's certificate never connects.
            let untrusting = test.client(credentials, port: tlsPort, tls: .init(serverName: "localhost"))
            let untrustingReader = EventReader(untrusting)
            let refused = Task { await untrusting.run() }
            defer { refused.cancel() }
            #expect(try await untrustingReader.next(where: { $0 == .connected }, timeout: .milliseconds(800)) == nil)
        }
    }

    @Test func theSDKRegistersConnectsAndSeesEachMessageOnce() async throws {
        try await TestNode.run { test in
            let http = HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey)
            let credentials = try await http.register(platform: "linux")
            try await http.setAlias("sdk-user", credentials: credentials)
            try await http.updateTags(add: ["beta"], credentials: credentials)
            let stored = try await test.stores.api.devices.find(
                appID: try #require(await test.stores.api.app(appKey: test.appKey)).id,
                registrationID: credentials.registrationID
            )
            #expect(stored?.alias == "sdk-user")
            #expect(stored?.tags == ["beta"])

            let client = test.client(credentials)
            let reader = EventReader(client)
            let running = Task { await client.run() }
            #expect(try await reader.next(where: { $0 == .connected }) == .connected)
            // CONNACK reaches the client before the gateway's registry is updated on its loop.
            try await waitUntil("the gateway to register \(credentials.registrationID)") { test.gateway.isConnected(credentials.registrationID) }

            let device = try #require(try await test.stores.gateway.device(registrationID: credentials.registrationID))
            #expect(try await test.gateway.deliver(test.notification("m1", alert: "first"), to: device) == .acknowledged)
            // The same message again (a replay, a fallback copy): acknowledged, not shown again.
            #expect(try await test.gateway.deliver(test.notification("m1", alert: "first"), to: device) == .acknowledged)
            #expect(try await test.gateway.deliver(test.notification("m2", alert: "second"), to: device) == .acknowledged)

            let isNotification: @Sendable (HeraldEvent) -> Bool = { if case .notification = $0 { true } else { false } }
            guard case .notification(let first) = try await reader.next(where: isNotification),
                case .notification(let second) = try await reader.next(where: isNotification)
            else {
                Issue.record("notifications missing: \(reader.all)")
                running.cancel()
                return
            }
            #expect(first.messageID == "m1")
            #expect(first.alert == "first")
            #expect(second.messageID == "m2")
            #expect(try await reader.next(where: isNotification, timeout: .milliseconds(300)) == nil)
            running.cancel()
            await running.value
        }
    }

    @Test func theSDKReconnectsByItselfAndGetsWhatItMissed() async throws {
        try await TestNode.run { test in
            let credentials = try await HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey).register(platform: "linux")
            let device = try #require(try await test.stores.gateway.device(registrationID: credentials.registrationID))
            let client = test.client(credentials)
            let reader = EventReader(client)
            let running = Task { await client.run() }
            #expect(try await reader.next(where: { $0 == .connected }) != nil)

            // Another connection with the same client id takes over, then goes away.
            let (intruder, code) = try await TestMQTTClient.connect(
                to: try SocketAddress(ipAddress: "127.0.0.1", port: test.gatewayPort),
                clientID: credentials.registrationID,
                username: test.appKey,
                password: credentials.deviceSecret
            )
            #expect(code == .accepted)
            #expect(try await reader.next(where: { $0 == .disconnected }) != nil)
            await intruder.close()
            _ = try await test.gateway.deliver(test.notification("while-away", alert: "missed"), to: device)

            #expect(try await reader.next(where: { $0 == .connected }) != nil)
            let replayed = try await reader.next(where: { if case .notification = $0 { true } else { false } })
            guard case .notification(let notification) = replayed else {
                Issue.record("no replay: \(reader.all)")
                running.cancel()
                return
            }
            #expect(notification.messageID == "while-away")
            running.cancel()
            await running.value
        }
    }

    /// The app's state drives the connection: the background closes it (Apple suspends a
    /// background app's sockets; APNs reaches it then), the foreground opens it again, and
    /// a network change while waiting to reconnect connects at once.
    @Test func theBackgroundClosesTheConnectionAndTheForegroundOpensItAgain() async throws {
        try await TestNode.run { test in
            let credentials = try await HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey).register(platform: "linux")
            var configuration = HeraldClient.Configuration(host: "127.0.0.1", port: test.gatewayPort, appKey: test.appKey)
            // A reconnect would otherwise wait a minute: only the network change may cut it short.
            configuration.backoff = Backoff(base: .seconds(60), jitter: 0)
            let client = HeraldClient(configuration: configuration, credentials: credentials, logger: Logger(label: "device"))
            let reader = EventReader(client)
            let running = Task { await client.run() }
            #expect(try await reader.next(where: { $0 == .connected }) != nil)
            try await waitUntil("the gateway to have the device") { test.gateway.isConnected(credentials.registrationID) }

            client.setAppState(.background)
            #expect(try await reader.next(where: { $0 == .disconnected }) != nil)
            try await waitUntil("the gateway to let the device go") { !test.gateway.isConnected(credentials.registrationID) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(!test.gateway.isConnected(credentials.registrationID), "the SDK connected again in the background")

            client.setAppState(.foreground)
            #expect(try await reader.next(where: { $0 == .connected }) != nil)

            // Lost (another connection takes over and leaves): the next try is a minute
            // away, but the network changed, so it connects at once.
            let (intruder, _) = try await TestMQTTClient.connect(
                to: try SocketAddress(ipAddress: "127.0.0.1", port: test.gatewayPort),
                clientID: credentials.registrationID,
                username: test.appKey,
                password: credentials.deviceSecret
            )
            #expect(try await reader.next(where: { $0 == .disconnected }) != nil)
            await intruder.close()
            client.networkChanged(available: true)
            #expect(try await reader.next(where: { $0 == .connected }, timeout: .seconds(10)) != nil)
            running.cancel()
            await running.value
        }
    }

    /// A refusal retrying can't cure (a wrong secret) ends the events with why, and the
    /// client stops instead of retrying for ever.
    @Test func aRefusedDeviceStopsWithTheReason() async throws {
        try await TestNode.run { test in
            let credentials = try await HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey).register(platform: "linux")
            let wrong = DeviceCredentials(registrationID: credentials.registrationID, deviceSecret: "not-the-secret")
            let client = test.client(wrong)
            let reader = EventReader(client)
            let running = Task { await client.run() }
            #expect(try await reader.next(where: { $0 == .stopped(.badCredentials) }) != nil)
            await running.value
            #expect(!reader.all.contains(.connected))
        }
    }

    @Test func reportsReachHerald() async throws {
        try await TestNode.run { test in
            let credentials = try await HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey).register(platform: "linux")
            let client = test.client(credentials)
            // Reported before the connection exists: sent once it does.
            try await client.report(.opened(messageID: "m1"))
            let reader = EventReader(client)
            let running = Task { await client.run() }
            #expect(try await reader.next(where: { $0 == .connected }) != nil)
            try await client.report(.background)
            for _ in 0..<300 where test.deviceEvents.withLockedValue({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(test.deviceEvents.withLockedValue { $0 } == [#"{"event":"opened","msg_id":"m1"}"#, #"{"event":"background"}"#])
            running.cancel()
            await running.value
        }
    }

    @Test func aReportLostWithItsConnectionIsSentAgainOnTheNextOne() async throws {
        try await TestNode.run { test in
            let credentials = try await HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey).register(platform: "linux")
            let link = try await FaultyLink.start(to: try SocketAddress(ipAddress: "127.0.0.1", port: test.gatewayPort))
            let client = test.client(credentials, port: link.port)
            let reader = EventReader(client)
            let running = Task { await client.run() }
            #expect(try await reader.next(where: { $0 == .connected }) != nil)
            try await client.report(.foreground)
            try await test.waitForDeviceEvents(1)

            // Written, but lost on the way, and then the connection goes.
            link.losesDeviceBytes(true)
            try await client.report(.opened(messageID: "m1"))
            try await Task.sleep(for: .milliseconds(200))
            #expect(test.deviceEvents.withLockedValue { $0.count } == 1)
            link.losesDeviceBytes(false)
            await link.cutConnections()
            #expect(try await reader.next(where: { $0 == .disconnected }) != nil)
            #expect(try await reader.next(where: { $0 == .connected }) != nil)

            // Sent again before anything newer; what was acknowledged is not sent again.
            try await client.report(.background)
            try await test.waitForDeviceEvents(3)
            try await Task.sleep(for: .milliseconds(100))
            #expect(
                test.deviceEvents.withLockedValue { $0 } == [
                    #"{"event":"foreground"}"#, #"{"event":"opened","msg_id":"m1"}"#, #"{"event":"background"}"#,
                ]
            )
            running.cancel()
            await running.value
            await link.close()
        }
    }

    @Test func backoffGrowsByTwoWithin30PercentAndStopsAtFiveMinutes() {
        let backoff = Backoff()
        for attempt in 0..<12 {
            let expected = min(pow(2.0, Double(attempt)), 300)
            for _ in 0..<50 {
                let delay = backoff.delay(attempt: attempt)
                let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
                #expect(seconds >= expected * 0.7 - 0.001 && seconds <= expected * 1.3 + 0.001, "attempt \(attempt): \(seconds)")
            }
        }
    }
}

struct ClientTestFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
