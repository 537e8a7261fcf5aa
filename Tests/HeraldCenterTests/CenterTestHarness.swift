import Foundation
import HeraldAPI
import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCenter
import HeraldClient
import HeraldCore
import HeraldGateway
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import Prometheus
import ServiceLifecycle
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Herald end to end: the HTTP API, the gateway, the message center and an APNs sandbox,
/// on a fresh PostgreSQL database, driven over HTTP and real connections.
struct CenterTest: Sendable {
    let api: URL
    let store: HeraldStore
    let gateway: Gateway
    let gatewayPort: Int
    let sandbox: APNsSandbox
    let appKey: String
    let masterSecret: String
    let appID: Int64
    let databaseURL: DatabaseURL

    static func run(
        ackTimeout: Duration = .seconds(1),
        configure: @Sendable (inout CenterConfiguration) -> Void = { _ in },
        faults: CenterFaults = CenterFaults(),
        recallWindow: Duration = .seconds(24 * 3600),
        _ body: @Sendable @escaping (CenterTest) async throws -> Void
    ) async throws {
        try await TestDatabase.withDatabase { url in
            let client = TestDatabase.client(url, maximumConnections: 8)
            let store = HeraldStore(client: client, sealer: TestDatabase.sealer, logger: TestDatabase.logger)
            let sandbox = try await APNsSandbox.start(configuration: .init(transport: .plaintext))
            let events = DeviceEvents()
            let gateway = Gateway(
                configuration: GatewayConfiguration(host: "127.0.0.1", port: 0),
                store: store,
                onDeviceEvent: events.receive,
                logger: TestDatabase.logger
            )
            var configuration = CenterConfiguration()
            configuration.ackTimeout = ackTimeout
            configuration.pollInterval = .milliseconds(200)
            configuration.apnsRetryDelay = .milliseconds(200)
            configuration.recallWindow = recallWindow
            configuration.apns = .sandbox(Self.target(sandbox))
            configure(&configuration)
            let center = MessageCenter(
                configuration: configuration,
                store: store,
                gateway: gateway,
                events: events,
                faults: faults,
                logger: TestDatabase.logger
            )
            let app = buildApplication(
                configuration: APIConfiguration(host: "127.0.0.1", port: 0, adminToken: "admin-token-for-tests", recallWindow: recallWindow),
                store: store,
                registry: PrometheusCollectorRegistry(),
                services: [gateway, center],
                localFanOut: center.localFanOut,
                logger: TestDatabase.logger
            )
            try await app.test(.live) { http in
                let created = try await store.createApp(name: "Center")
                let test = CenterTest(
                    api: URL(string: "http://127.0.0.1:\(http.port!)")!,
                    store: store,
                    gateway: gateway,
                    gatewayPort: try await gateway.localAddress.port!,
                    sandbox: sandbox,
                    appKey: created.app.appKey,
                    masterSecret: created.masterSecret,
                    appID: created.app.id,
                    databaseURL: url
                )
                try await body(test)
            }
            await sandbox.shutdown()
        }
    }

    static func target(_ sandbox: APNsSandbox) -> APNsRouting.SandboxTarget {
        APNsRouting.SandboxTarget(host: "127.0.0.1", port: sandbox.port, transport: .plaintext) { credentials in
            if case .token(let keyID, let teamID, let pem) = credentials.auth {
                try sandbox.registerSigningKey(keyID: keyID, teamID: teamID, privateKeyPEM: pem)
            }
        }
    }

    // MARK: HTTP

    struct Response: @unchecked Sendable {
        var status: Int
        var json: [String: Any]

        var error: Int? { (json["error"] as? [String: Any])?["code"] as? Int }
        var msgID: String { json["msg_id"] as? String ?? "" }
    }

    func call(_ method: String, _ path: String, _ body: Any? = nil, appKey: String? = nil, secret: String? = nil) async throws -> Response {
        var request = URLRequest(url: api.appendingPathComponent(""))
        request.url = URL(string: api.absoluteString + path)
        request.httpMethod = method
        let basic = Data("\(appKey ?? self.appKey):\(secret ?? masterSecret)".utf8).base64EncodedString()
        request.setValue("Basic \(basic)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return Response(status: (response as? HTTPURLResponse)?.statusCode ?? 0, json: json)
    }

    /// Rows of `table` (with an optional WHERE clause after it).
    func count(_ tableAndFilter: String) async throws -> Int {
        let rows = try await store.client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(tableAndFilter)"))
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    func push(_ body: [String: Any]) async throws -> Response {
        try await call("POST", "/v3/push", body)
    }

    /// The report of a message once it settled (or the last one seen after `timeout`).
    func settledReport(
        _ msgID: String,
        timeout: Duration = .seconds(15),
        until: @Sendable ([String: Any]) -> Bool = { _ in true }
    )
        async throws -> [String: Any]
    {
        let deadline = ContinuousClock.now + timeout
        var last: [String: Any] = [:]
        while ContinuousClock.now < deadline {
            let response = try await call("GET", "/v3/report/received?msg_ids=\(msgID)")
            last = (response.json["reports"] as? [[String: Any]])?.first ?? [:]
            if last["done"] as? Bool == true, until(last) { return last }
            try await Task.sleep(for: .milliseconds(50))
        }
        return last
    }

    func status(_ msgID: String, _ registrationID: String) async throws -> String? {
        let response = try await call("POST", "/v3/report/status/message", ["msg_id": msgID, "registration_ids": [registrationID]])
        return ((response.json["statuses"] as? [String: Any])?[registrationID] as? [String: Any])?["status"] as? String
    }

    // MARK: Devices

    static func token(_ n: Int) -> String {
        String(format: "%064x", n + 0xABC000)
    }

    func register(platform: String = "ios", token: String? = nil, alias: String? = nil, tags: [String] = []) async throws -> DeviceCredentials {
        let http = HeraldAPIClient(baseURL: api, appKey: appKey)
        let credentials = try await http.register(platform: platform, apnsToken: token, apnsEnvironment: token == nil ? nil : "sandbox")
        if let alias { try await http.setAlias(alias, credentials: credentials) }
        if !tags.isEmpty { try await http.updateTags(add: tags, credentials: credentials) }
        return credentials
    }

    func client(_ credentials: DeviceCredentials) -> HeraldClient {
        HeraldClient(
            configuration: .init(host: "127.0.0.1", port: gatewayPort, appKey: appKey, keepAlive: 30, backoff: Backoff(base: .milliseconds(100))),
            credentials: credentials,
            logger: TestDatabase.logger
        )
    }

    /// Runs an SDK client for `body`, once it is connected.
    func online<Result: Sendable>(
        _ credentials: DeviceCredentials,
        _ body: @Sendable (EventReader) async throws -> Result
    ) async throws -> Result {
        let client = client(credentials)
        let reader = EventReader(client)
        let running = Task { await client.run() }
        defer { running.cancel() }
        guard try await reader.next(where: { $0 == .connected }) != nil else {
            throw TestFailure("device did not connect")
        }
        try await waitUntil("the gateway to register \(credentials.registrationID)") { gateway.isConnected(credentials.registrationID) }
        return try await body(reader)
    }

    /// A raw MQTT connection as `device`, registered with the gateway: unlike the SDK, it
    /// acknowledges only what the test tells it to.
    func rawConnection(_ device: DeviceCredentials) async throws -> TestMQTTClient {
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

    func apnsReceived(_ token: String) -> [RecordedNotification] {
        sandbox.notifications.filter { $0.deviceToken == token }
    }

    /// Waits until the sandbox has `count` notifications for `token` (of those `matching`),
    /// and returns those.
    func waitForAPNs(
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
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reads events from a client's stream with a deadline.
final class EventReader: Sendable {
    private let received = NIOLockedValueBox<[HeraldEvent]>([])
    private let task: Task<Void, Never>

    init(_ client: HeraldClient) {
        let received = self.received
        task = Task {
            for await event in client.events { received.withLockedValue { $0.append(event) } }
        }
    }

    func next(where matching: @Sendable (HeraldEvent) -> Bool = { _ in true }, timeout: Duration = .seconds(10)) async throws -> HeraldEvent? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let found = received.withLockedValue { events -> HeraldEvent? in
                guard let index = events.firstIndex(where: matching) else { return nil }
                return events.remove(at: index)
            }
            if let found { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    var all: [HeraldEvent] { received.withLockedValue { $0 } }

    deinit { task.cancel() }
}

extension HeraldEvent {
    var notification: Notification? {
        if case .notification(let notification) = self { return notification }
        return nil
    }

    var isNotification: Bool { notification != nil }

    var message: Message? {
        if case .message(let message) = self { return message }
        return nil
    }

    var isMessage: Bool { message != nil }
}
