import Configuration
import Foundation
import HeraldAPI
import HeraldGateway
import Logging

/// Everything `herald serve` reads from configuration. Keys are documented in the README;
/// environment variables are the keys upper-cased with a `HERALD_` prefix
/// (`http.maxBodySize` → `HERALD_HTTP_MAX_BODY_SIZE`).
struct HeraldConfiguration: Sendable {
    /// `database.url`: PostgreSQL to use; nil starts the embedded cluster.
    var databaseURL: String?
    /// `database.poolSize`: connections in each pool (the API's; the gateway and center's).
    var databasePoolSize: Int
    /// `database.wait`: seconds an API request waits on a database that doesn't answer
    /// before Herald checks it with a fresh connection and, if that is refused, answers 503.
    var databaseWaitSeconds: Int
    /// `dataDir`: Herald's own files (embedded cluster, generated secrets).
    var dataDirectory: String
    /// `admin.token`: bearer token of the admin API; generated into the data dir when unset.
    var adminToken: String?
    /// `keyEncryptionKey`: base64 of 32 bytes sealing APNs credentials; generated when unset.
    var keyEncryptionKey: String?
    /// `http.host`, `http.port`, `http.maxBodySize`.
    var httpHost: String
    var httpPort: Int
    var httpMaxBodySize: Int
    /// `http.requestTimeout`, `http.idleTimeout` (seconds): a request must arrive whole
    /// within the first of its first byte; an idle connection is closed after the second.
    var httpRequestTimeoutSeconds: Int
    var httpIdleTimeoutSeconds: Int
    /// `auth.failuresPerKeyAndAddress`, `auth.failuresPerAddress`, `auth.failuresPerKey`,
    /// `auth.failureWindow` (seconds): the API's throttle of failed authentications.
    var authFailures: AuthFailureBudgets
    /// `mqtt.host`, `mqtt.port`: the device gateway's listener.
    var mqttHost: String
    var mqttPort: Int
    /// PEM files of the MQTT TLS listener; with both set, Herald also listens on `mqttTLSPort`.
    var mqttTLSCertificate: String?
    var mqttTLSKey: String?
    var mqttTLSPort: Int
    /// `nodeID`: this node's name in the presence table.
    var nodeID: String
    /// `postgres.binDir`: PostgreSQL binaries for the embedded cluster.
    var postgresBinDirectory: String?
    /// `log.level`.
    var logLevel: Logger.Level

    /// "auto" (on when the database is embedded), "on" or "off": send APNs traffic to a
    /// local APNs sandbox instead of Apple.
    var apnsSandbox: Bool
    var apnsSandboxPort: Int
    var apnsSandboxInspectPort: Int
    /// APNs connections per app and environment.
    var apnsConnections: Int
    var centerWorkers: Int
    var ackTimeoutSeconds: Int
    var recallWindowSeconds: Int
    var messageRetentionDays: Int

    static let secretVariables: Set<String> = ["HERALD_DATABASE_URL", "HERALD_ADMIN_TOKEN", "HERALD_KEY_ENCRYPTION_KEY"]

    init(reader: ConfigReader) throws {
        databaseURL = reader.string(forKey: "database.url", isSecret: true).flatMap { $0.isEmpty ? nil : $0 }
        databasePoolSize = reader.int(forKey: "database.poolSize", default: 20)
        databaseWaitSeconds = reader.int(forKey: "database.wait", default: 5)
        dataDirectory = reader.string(forKey: "dataDir", default: ".herald")
        adminToken = reader.string(forKey: "admin.token", isSecret: true).flatMap { $0.isEmpty ? nil : $0 }
        keyEncryptionKey = reader.string(forKey: "keyEncryptionKey", isSecret: true).flatMap { $0.isEmpty ? nil : $0 }
        httpHost = reader.string(forKey: "http.host", default: "0.0.0.0")
        httpPort = reader.int(forKey: "http.port", default: 8080)
        httpMaxBodySize = reader.int(forKey: "http.maxBodySize", default: 1 << 20)
        httpRequestTimeoutSeconds = reader.int(forKey: "http.requestTimeout", default: 30)
        httpIdleTimeoutSeconds = reader.int(forKey: "http.idleTimeout", default: 60)
        postgresBinDirectory = reader.string(forKey: "postgres.binDir")
        authFailures = AuthFailureBudgets(
            perKeyAndAddress: reader.int(forKey: "auth.failuresPerKeyAndAddress", default: 10),
            perAddress: reader.int(forKey: "auth.failuresPerAddress", default: 50),
            perKey: reader.int(forKey: "auth.failuresPerKey", default: 200),
            window: .seconds(reader.int(forKey: "auth.failureWindow", default: 60))
        )
        mqttHost = reader.string(forKey: "mqtt.host", default: "0.0.0.0")
        mqttPort = reader.int(forKey: "mqtt.port", default: 1883)
        mqttTLSCertificate = reader.string(forKey: "mqtt.tls.certificate").flatMap { $0.isEmpty ? nil : $0 }
        mqttTLSKey = reader.string(forKey: "mqtt.tls.key").flatMap { $0.isEmpty ? nil : $0 }
        mqttTLSPort = reader.int(forKey: "mqtt.tls.port", default: 8883)
        nodeID = reader.string(forKey: "nodeID", default: ProcessInfo.processInfo.hostName)
        let level = reader.string(forKey: "log.level", default: "info")
        guard let logLevel = Logger.Level(rawValue: level) else {
            throw StartupError("log.level: unknown level '\(level)' (trace, debug, info, notice, warning, error, critical)")
        }
        self.logLevel = logLevel
        let sandbox = reader.string(forKey: "apns.sandbox", default: "auto")
        switch sandbox {
        case "auto": apnsSandbox = databaseURL == nil
        case "on", "true": apnsSandbox = true
        case "off", "false": apnsSandbox = false
        default: throw StartupError("apns.sandbox: expected auto, on or off (got '\(sandbox)')")
        }
        apnsSandboxPort = reader.int(forKey: "apns.sandboxPort", default: 2197)
        apnsSandboxInspectPort = reader.int(forKey: "apns.sandboxInspectPort", default: 2198)
        apnsConnections = reader.int(forKey: "apns.connections", default: 2)
        centerWorkers = reader.int(forKey: "center.workers", default: 4)
        ackTimeoutSeconds = reader.int(forKey: "center.ackTimeout", default: 10)
        recallWindowSeconds = reader.int(forKey: "center.recallWindow", default: 86_400)
        messageRetentionDays = reader.int(forKey: "center.messageRetentionDays", default: 30)
        guard (0...65535).contains(apnsSandboxPort) else { throw StartupError("apns.sandboxPort: \(apnsSandboxPort) is not a port") }
        guard (0...65535).contains(apnsSandboxInspectPort) else {
            throw StartupError("apns.sandboxInspectPort: \(apnsSandboxInspectPort) is not a port")
        }
        guard (1...16).contains(apnsConnections) else { throw StartupError("apns.connections: must be 1 to 16") }
        guard (1...64).contains(centerWorkers) else { throw StartupError("center.workers: must be 1 to 64") }
        guard (1...300).contains(ackTimeoutSeconds) else { throw StartupError("center.ackTimeout: must be 1 to 300 seconds") }
        guard (60...864_000).contains(recallWindowSeconds) else {
            throw StartupError("center.recallWindow: must be 60 to 864000 seconds")
        }
        // Longer than the longest time to live (10 days) and recall window.
        guard (11...3650).contains(messageRetentionDays) else {
            throw StartupError("center.messageRetentionDays: must be 11 to 3650 days")
        }
        guard (0...65535).contains(httpPort) else { throw StartupError("http.port: \(httpPort) is not a port") }
        guard (0...65535).contains(mqttPort) else { throw StartupError("mqtt.port: \(mqttPort) is not a port") }
        guard (0...65535).contains(mqttTLSPort) else { throw StartupError("mqtt.tls.port: \(mqttTLSPort) is not a port") }
        if (mqttTLSCertificate == nil) != (mqttTLSKey == nil) {
            throw StartupError("mqtt.tls: set both mqtt.tls.certificate and mqtt.tls.key (PEM files), or neither")
        }
        guard (1...1000).contains(databasePoolSize) else { throw StartupError("database.poolSize: must be 1 to 1000") }
        for (key, value) in [
            ("auth.failuresPerKeyAndAddress", authFailures.perKeyAndAddress), ("auth.failuresPerAddress", authFailures.perAddress),
            ("auth.failuresPerKey", authFailures.perKey),
        ] where value < 0 {
            throw StartupError("\(key): must be 0 (no limit) or more")
        }
        guard (.seconds(1) ... .seconds(86_400)).contains(authFailures.window) else {
            throw StartupError("auth.failureWindow: must be 1 to 86400 seconds")
        }
        guard (1...60).contains(databaseWaitSeconds) else { throw StartupError("database.wait: must be 1 to 60 seconds") }
        guard (1...3600).contains(httpRequestTimeoutSeconds) else { throw StartupError("http.requestTimeout: must be 1 to 3600 seconds") }
        guard (1...3600).contains(httpIdleTimeoutSeconds) else { throw StartupError("http.idleTimeout: must be 1 to 3600 seconds") }
        guard httpMaxBodySize >= 1024 else { throw StartupError("http.maxBodySize: at least 1024 bytes") }
        if let adminToken, adminToken.utf8.count < 16 {
            throw StartupError("admin.token: at least 16 characters")
        }
    }
}

extension HeraldConfiguration {
    /// The MQTT TLS listener, with its PEM files read; nil when none is configured.
    func mqttTLSListener() throws -> GatewayConfiguration.TLSListener? {
        guard let certificatePath = mqttTLSCertificate, let keyPath = mqttTLSKey else { return nil }
        func read(_ path: String, key: String) throws -> String {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8),
                text.contains("-----BEGIN")
            else {
                throw StartupError("\(key): cannot read a PEM file at \(path)")
            }
            return text
        }
        return GatewayConfiguration.TLSListener(
            host: mqttHost,
            port: mqttTLSPort,
            certificateChainPEM: try read(certificatePath, key: "mqtt.tls.certificate"),
            privateKeyPEM: try read(keyPath, key: "mqtt.tls.key")
        )
    }
}
