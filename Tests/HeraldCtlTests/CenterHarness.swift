import Foundation
import HeraldAPI
import HeraldAPNs
import HeraldAPNsSandbox
import HeraldCenter
import HeraldCore
import HeraldGateway
import HeraldKit
import HeraldNode
import HeraldNodeTesting
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Prometheus
import Testing

/// A heraldctl test with a whole node running (``TestNode``): the API, the gateway, the
/// message center and an APNs sandbox, on a fresh database; its outbound requests may
/// reach loopback receivers.
struct CenterCtlTest: Sendable {
    let ctl: CtlTest
    let node: TestNode

    var app: CreatedApp { node.app }
    var sandbox: APNsSandbox { node.sandbox }

    static func run(_ body: @Sendable @escaping (CenterCtlTest) async throws -> Void) async throws {
        // The commands' webhook receivers listen on this machine.
        let configure: @Sendable (inout HeraldNodeConfiguration) -> Void = { $0.allowLoopbackReceivers() }
        try await TestNode.run(configure: configure) { node in
            try await CtlTest.withHome { home in
                let ctl = CtlTest(url: node.apiURL.absoluteString, store: node.stores, home: home)
                try await body(CenterCtlTest(ctl: ctl, node: node))
            }
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
        let registrationID = try await ctl.store.api.devices.register(
            appKey: app.app.appKey,
            DeviceRegistration(platform: .ios, apnsToken: token, apnsEnvironment: .sandbox)
        ).registrationID
        try await label(registrationID, alias: alias, tags: tags)
        return (registrationID, token)
    }

    /// A Linux device (no APNs): pushes wait in its inbox until it connects.
    func linuxDevice(alias: String? = nil, tags: [String] = []) async throws -> RegisteredDevice {
        let device = try await ctl.store.api.devices.register(appKey: app.app.appKey, DeviceRegistration(platform: .linux))
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
        try await node.waitForAPNs(token, count: count, timeout: timeout)
    }

    /// How many messages the app has stored.
    func messageCount() async throws -> Int {
        try await node.count("messages WHERE app_id = \(app.app.id)")
    }
}

extension CLIResult {
    /// The message id of a `push` answer (`msg_id  <id>`).
    var messageID: String? { field("msg_id") }
}
