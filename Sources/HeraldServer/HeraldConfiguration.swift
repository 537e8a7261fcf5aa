import Configuration
import Foundation
import HeraldAPI
import HeraldAPNs
import HeraldCenter
import HeraldCore
import HeraldGateway
import HeraldStore
import HeraldWebhooks
import Logging

/// Everything `herald serve` reads from configuration: each component's configuration, read
/// by the component (its keys are listed at its `init(reader:)`), and what only the server
/// uses. Keys are documented in the README; environment variables are the keys upper-cased
/// with a `HERALD_` prefix (`http.maxBodySize` → `HERALD_HTTP_MAX_BODY_SIZE`).
struct HeraldConfiguration: Sendable {
    /// `nodeID`, `center.recallWindow`, `outbound.allowRanges`: shared by the gateway, the
    /// message center and the API.
    var node: NodeConfiguration
    /// `database.*`, `postgres.binDir`.
    var database: DatabaseConfiguration
    /// `http.*`, `auth.*`. The admin token and the database URL are set once Herald has them
    /// (generated, or the embedded cluster's).
    var api: APIConfiguration
    /// `mqtt.*`.
    var gateway: GatewayConfiguration
    /// `center.*`, `apns.retryDelay`, `apns.maxRetryDelay` (every channel's retries).
    var center: CenterConfiguration
    /// `apns.connections`, `apns.requestTimeout`, `apns.circuitBreaker.*`: the APNs
    /// channel. Where its traffic goes is set when the sandbox has started.
    var apns: APNsChannelConfiguration
    /// `center.webhook*`: webhook and callback delivery.
    var webhooks: WebhookDelivery

    /// `dataDir`: Herald's own files (embedded cluster, generated secrets).
    var dataDirectory: String
    /// `admin.token`: bearer token of the admin API; generated into the data dir when unset.
    var adminToken: String?
    /// `keyEncryptionKey`: base64 of 32 bytes sealing APNs credentials; generated when unset.
    var keyEncryptionKey: String?
    /// `log.level`.
    var logLevel: Logger.Level
    /// `apns.sandbox`: "auto" (on when the database is embedded), "on" or "off": send APNs
    /// traffic to a local APNs sandbox instead of Apple.
    var apnsSandbox: Bool
    /// `apns.sandboxPort`, `apns.sandboxInspectPort`: the local sandbox's ports.
    var apnsSandboxPort: Int
    var apnsSandboxInspectPort: Int
    /// `fcm.sandbox`: "auto" (on when the database is embedded), "on" or "off": send FCM
    /// traffic to a local FCM sandbox instead of Google. `fcm.sandboxPort`: its port (0: any).
    var fcmSandbox: Bool
    var fcmSandboxPort: Int

    /// The loopback ranges, reachable by outbound requests in the local setup.
    static let loopback = [IPRange("127.0.0.0/8")!, IPRange("::1")!]

    static let secretVariables: Set<String> = ["HERALD_DATABASE_URL", "HERALD_ADMIN_TOKEN", "HERALD_KEY_ENCRYPTION_KEY", "HERALD_OIDC_CLIENT_SECRET"]

    init(reader: ConfigReader) throws {
        do {
            node = try NodeConfiguration(reader: reader)
            database = try DatabaseConfiguration(reader: reader)
            // The local setup (the embedded database) is one machine: its webhooks, callbacks
            // and SMS provider may be on it, unless `outbound.allowRanges` says otherwise.
            if database.url == nil, ConfigSection(reader, "outbound").optionalString("allowRanges") == nil {
                node.outbound.allowed = Self.loopback
            }
            api = try APIConfiguration(reader: reader, node: node, database: database)
            gateway = try GatewayConfiguration(reader: reader)
            center = try CenterConfiguration(reader: reader, node: node)
            apns = try APNsChannelConfiguration(reader: reader)
            webhooks = try WebhookDelivery(reader: reader)

            let root = ConfigSection(reader)
            dataDirectory = root.string("dataDir", default: ".herald")
            adminToken = root.optionalString("admin.token", isSecret: true)
            keyEncryptionKey = root.optionalString("keyEncryptionKey", isSecret: true)
            let level = root.string("log.level", default: "info")
            guard let logLevel = Logger.Level(rawValue: level) else {
                throw ConfigurationError(key: "log.level", "unknown level '\(level)' (trace, debug, info, notice, warning, error, critical)")
            }
            self.logLevel = logLevel
            let apns = root.section("apns")
            let sandbox = apns.string("sandbox", default: "auto")
            switch sandbox {
            case "auto": apnsSandbox = database.url == nil
            case "on", "true": apnsSandbox = true
            case "off", "false": apnsSandbox = false
            default: throw apns.error("sandbox", "expected auto, on or off (got '\(sandbox)')")
            }
            apnsSandboxPort = try apns.port("sandboxPort", default: 2197)
            apnsSandboxInspectPort = try apns.port("sandboxInspectPort", default: 2198)
            let fcm = root.section("fcm")
            let fcmChoice = fcm.string("sandbox", default: "auto")
            switch fcmChoice {
            case "auto": fcmSandbox = database.url == nil
            case "on", "true": fcmSandbox = true
            case "off", "false": fcmSandbox = false
            default: throw fcm.error("sandbox", "expected auto, on or off (got '\(fcmChoice)')")
            }
            fcmSandboxPort = try fcm.port("sandboxPort", default: 0)
            if let adminToken, adminToken.utf8.count < 16 {
                throw ConfigurationError(key: "admin.token", "at least 16 characters")
            }
        } catch let error as ConfigurationError {
            throw StartupError(error.description)
        }
        api.apnsDestination = apnsSandbox ? .sandbox : .apple
    }
}
