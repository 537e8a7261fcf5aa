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
import PostgresNIO
import Prometheus
import Testing

/// A heraldctl test with the whole push path running: the API, the gateway, the message
/// center and an APNs sandbox, on a fresh database.
struct CenterCtlTest: Sendable {
    let ctl: CtlTest
    let app: CreatedApp
    let gateway: Gateway
    let gatewayPort: Int
    let sandbox: APNsSandbox

    static func run(_ body: @Sendable @escaping (CenterCtlTest) async throws -> Void) async throws {
        try await TestDatabase.withDatabase { databaseURL in
            let client = TestDatabase.client(databaseURL, maximumConnections: 8)
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
            configuration.ackTimeout = .seconds(1)
            configuration.pollInterval = .milliseconds(200)
            configuration.apnsRetryDelay = .milliseconds(200)
            configuration.apns = .sandbox(
                APNsRouting.SandboxTarget(host: "127.0.0.1", port: sandbox.port, transport: .plaintext) { credentials in
                    if case .token(let keyID, let teamID, let pem) = credentials.auth {
                        try sandbox.registerSigningKey(keyID: keyID, teamID: teamID, privateKeyPEM: pem)
                    }
                }
            )
            let center = MessageCenter(configuration: configuration, store: store, gateway: gateway, events: events, logger: TestDatabase.logger)
            let application = buildApplication(
                configuration: APIConfiguration(host: "127.0.0.1", port: 0, adminToken: CtlTest.adminToken),
                store: store,
                registry: PrometheusCollectorRegistry(),
                services: [gateway, center],
                localFanOut: center.localFanOut,
                logger: TestDatabase.logger
            )
            try await application.test(.live) { http in
                let home = FileManager.default.temporaryDirectory.appendingPathComponent("heraldctl-test-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: home) }
                let ctl = CtlTest(url: "http://127.0.0.1:\(try #require(http.port))", store: store, home: home)
                let test = CenterCtlTest(
                    ctl: ctl,
                    app: try await store.createApp(name: "Push"),
                    gateway: gateway,
                    gatewayPort: try #require(try await gateway.localAddress.port),
                    sandbox: sandbox
                )
                try await body(test)
            }
            await sandbox.shutdown()
        }
    }

    /// heraldctl as the app's operator.
    func heraldctl(_ arguments: String...) async throws -> CLIResult {
        try await ctl.heraldctl(arguments, environment: ["HERALD_APP_KEY": app.app.appKey, "HERALD_MASTER_SECRET": app.masterSecret])
    }

    /// heraldctl as the app's operator, on a terminal; nil without util-linux `script`.
    func heraldctlOnTerminal(_ arguments: String...) async throws -> CLIResult? {
        var environment = ["HOME": ctl.home.path, "HERALD_URL": ctl.url, "PATH": "/usr/bin:/bin", "TERM": "xterm"]
        environment["HERALD_APP_KEY"] = app.app.appKey
        environment["HERALD_MASTER_SECRET"] = app.masterSecret
        return try await CLIRunner.runOnTerminal(arguments, environment: environment)
    }

    /// An iOS device with an APNs token (sandbox environment), never connected: pushes
    /// to it go to APNs.
    func iosDevice(alias: String? = nil, tags: [String] = []) async throws -> (registrationID: String, token: String) {
        let token = RandomToken.hex(byteCount: 32)
        let registrationID = try await ctl.store.registerDevice(
            appKey: app.app.appKey,
            DeviceRegistration(platform: .ios, apnsToken: token, apnsEnvironment: .sandbox)
        ).registrationID
        try await label(registrationID, alias: alias, tags: tags)
        return (registrationID, token)
    }

    /// A Linux device (no APNs): pushes wait in its inbox until it connects.
    func linuxDevice(alias: String? = nil, tags: [String] = []) async throws -> RegisteredDevice {
        let device = try await ctl.store.registerDevice(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
        try await label(device.registrationID, alias: alias, tags: tags)
        return device
    }

    private func label(_ registrationID: String, alias: String?, tags: [String]) async throws {
        var arguments = ["devices", "update", registrationID]
        if let alias { arguments += ["--alias", alias] }
        for tag in tags { arguments += ["--add-tag", tag] }
        guard arguments.count > 3 else { return }
        let result = try await ctl.heraldctl(arguments, environment: ["HERALD_APP_KEY": app.app.appKey, "HERALD_MASTER_SECRET": app.masterSecret])
        #expect(result.status == 0, "\(result)")
    }

    /// What the APNs sandbox received for `token`, once it has `count` notifications or
    /// after `timeout`.
    func apns(_ token: String, count: Int = 1, timeout: Duration = .seconds(10)) async throws -> [RecordedNotification] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let received = sandbox.notifications.filter { $0.deviceToken == token }
            if received.count >= count { return received }
            try await Task.sleep(for: .milliseconds(20))
        }
        return sandbox.notifications.filter { $0.deviceToken == token }
    }

    /// How many messages the app has stored.
    func messageCount() async throws -> Int {
        let rows = try await ctl.store.client.query("SELECT count(*) FROM messages WHERE app_id = \(app.app.id)", logger: TestDatabase.logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}

extension CLIResult {
    /// The message id of a `push` answer (`msg_id  <id>`).
    var messageID: String? { field("msg_id") }
}
