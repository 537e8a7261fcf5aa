import ArgumentParser
import Foundation
import HeraldAPI
import HeraldAPNs
import HeraldCenter
import HeraldCore
import HeraldFCMSandbox
import HeraldGateway
import HeraldNode
import HeraldSMS
import HeraldStore
import HeraldWebhooks
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// `herald serve`: the whole of Herald in one process.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run Herald (the default command).")

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        ProcessHeap.limitArenas()
        try await reportingStartupErrors {
            let configuration = try HeraldConfiguration(reader: try await options.reader(environment: ProcessInfo.processInfo.environment))
            let logger = LogSetup.bootstrap(level: configuration.logLevel)
            let registry = Telemetry.bootstrap()
            let dataDirectory = try DataDirectory(path: configuration.dataDirectory)
            let adminToken = try configuration.adminToken ?? dataDirectory.secret(dataDirectory.adminTokenFile) { RandomToken.hex(byteCount: 24) }
            let sealer = try keyEncryptionKey(configuration, dataDirectory: dataDirectory, logger: logger)
            for port in ListenPort.all(configuration) { try await port.ensureFree() }

            let database = try await DatabaseSetup.prepare(configuration, dataDirectory: dataDirectory, logger: logger)
            do {
                var api = configuration.api
                api.adminToken = adminToken
                var banner = Banner(
                    configuration: configuration,
                    dataDirectory: dataDirectory,
                    database: database,
                    adminTokenFromFile: configuration.adminToken == nil
                )
                let center = configuration.center
                var apns = configuration.apns
                var services: [any Service] = []
                // Started before the gateway: a gateway that is made and never run would
                // leave its listening promises unfulfilled (fatal in debug builds).
                if configuration.apnsSandbox {
                    let sandbox = try await LocalSandbox.start(configuration, logger: logger)
                    apns.routing = sandbox.routing
                    services += sandbox.services
                    banner.sandbox = sandbox
                }
                var node = HeraldNodeConfiguration(
                    database: .init(
                        url: database.url,
                        poolSize: configuration.database.poolSize,
                        deliveryPoolSize: configuration.database.deliveryPoolSize,
                        eventsPoolSize: configuration.database.eventsPoolSize
                    ),
                    node: configuration.node,
                    api: api,
                    gateway: configuration.gateway,
                    center: center
                )
                // The local setup's SMS fallback goes to the in-process SMS sandbox:
                // recorded, never sent to a phone.
                node.apns = apns
                if let sandbox = banner.sandbox { node.sms.provider = sandbox.sms }
                node.webhooks = configuration.webhooks
                if configuration.fcmSandbox {
                    let fcm = try await LocalSandbox.startFCM(configuration)
                    node.fcm = .localSandbox(fcm)
                    banner.fcm = fcm
                }
                let readyBanner = banner
                let herald = HeraldNode(
                    node,
                    sealer: sealer,
                    registry: registry,
                    services: services,
                    onListening: { ports in readyBanner.print(port: ports.http, mqttPort: ports.mqtt) },
                    logger: logger
                )
                let group = ServiceGroup(
                    configuration: .init(services: herald.services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
                )
                try await group.run()
            } catch {
                await database.stop(logger: logger)
                throw error
            }
            await database.stop(logger: logger)
        }
    }

    private func keyEncryptionKey(_ configuration: HeraldConfiguration, dataDirectory: DataDirectory, logger: Logger) throws -> CredentialSealer {
        do {
            if let configured = configuration.keyEncryptionKey {
                return try CredentialSealer(base64Key: configured)
            }
            if configuration.database.url != nil {
                logger.warning(
                    "no key-encryption key configured; using one generated in the data directory. Every node must share it: set HERALD_KEY_ENCRYPTION_KEY",
                    metadata: ["herald.file": "\(dataDirectory.keyEncryptionKeyFile)"]
                )
            }
            return try CredentialSealer(
                base64Key: try dataDirectory.secret(dataDirectory.keyEncryptionKeyFile) { CredentialSealer.generateBase64Key() }
            )
        } catch let error as HeraldError {
            throw StartupError("keyEncryptionKey: \(error.message)")
        }
    }
}

/// What `herald serve` prints once it listens: where, and how to make the first app.
struct Banner: Sendable {
    let configuration: HeraldConfiguration
    let dataDirectory: DataDirectory
    let database: DatabaseSetup
    let adminTokenFromFile: Bool
    var sandbox: LocalSandbox?
    var fcm: FCMSandbox?

    func print(port: Int, mqttPort: Int) {
        let host = ["0.0.0.0", "::", ""].contains(configuration.api.host) ? "127.0.0.1" : configuration.api.host
        let base = "http://\(host):\(port)"
        let databaseLine =
            database.embedded != nil
            ? "embedded PostgreSQL in \(dataDirectory.postgresDirectory) (port \(database.url.port))"
            : "\(database.url)"
        let token = adminTokenFromFile ? "$(cat \(dataDirectory.adminTokenFile))" : "$HERALD_ADMIN_TOKEN"
        let text = """

            Herald is running.
              API       \(base)   (description: \(base)/openapi.yaml)
              Devices   mqtt://\(host):\(mqttPort)   (MQTT 3.1.1, see docs/protocol.md)\(configuration.gateway.tls.map { "\n              Devices   mqtts://\(host):\($0.port)   (MQTT over TLS)" } ?? "")
              Database  \(databaseLine)
              APNs      \(sandbox.map { "local sandbox (no Apple credentials needed); deliveries at http://127.0.0.1:\($0.inspectPort)/notifications" } ?? "Apple (api.push.apple.com / api.sandbox.push.apple.com)")
              FCM       \(fcm.map { "local sandbox (no Firebase project needed); sent messages at \($0.baseURL)/sandbox/messages (its certificate is self-signed)" } ?? "Google (fcm.googleapis.com)")
              SMS       \(sandbox.map { "local sandbox (nothing reaches a phone); sent SMS at http://127.0.0.1:\($0.inspectPort)/sms" } ?? "none configured (sms_message is recorded failed: NoSMSProvider)")
              Admin     token \(adminTokenFromFile ? "in \(dataDirectory.adminTokenFile)" : "from HERALD_ADMIN_TOKEN")

            Create your first app:
              curl -s -X POST \(base)/admin/v1/apps -H "Authorization: Bearer \(token)" \\
                   -H 'Content-Type: application/json' -d '{"name": "My App"}'

            Stop with Ctrl-C.

            """
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
