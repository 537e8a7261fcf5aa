import Configuration
import HeraldCore

/// How a node's APNs channel sends: where (Apple or a local sandbox), over how many
/// connections per app and environment, with which deadline and circuit breaker.
public struct APNsChannelConfiguration: Sendable {
    /// Where APNs traffic goes.
    public var routing: APNsRouting = .apple
    /// APNs connections per app and environment (1 to 16).
    public var connections: Int = 2
    /// How long an APNs send may take, retries on other connections included; a copy
    /// without an answer by then is retried later (reason `Timeout`).
    public var requestTimeout: Duration = .seconds(10)
    /// When APNs answering 5xx stops requests for a while (per app and environment).
    public var circuitBreaker = APNsCircuitBreaker.Configuration()

    public init() {}

    /// Reads the APNs channel's settings from Herald's configuration.
    ///
    /// Configuration keys:
    /// - `apns.connections` (int, default: 2, 1 to 16): HTTP/2 connections per app and
    ///   environment.
    /// - `apns.requestTimeout` (int, default: 10, 1 to 300): how long an APNs send may take.
    /// - `apns.circuitBreaker.*`: see ``APNsCircuitBreaker/Configuration/init(reader:)``.
    ///
    /// Not read here: ``routing`` (the server decides, `apns.sandbox`), and the retry delays
    /// (`apns.retryDelay`, `apns.maxRetryDelay`), which the center applies to every channel.
    ///
    /// - Parameter reader: Herald's configuration (not scoped: the keys are at its root).
    /// - Throws: ``ConfigurationError`` naming the key of a value out of range.
    public init(reader: ConfigReader) throws {
        let apns = ConfigSection(reader, "apns")
        self.init()
        connections = try apns.int("connections", default: connections, in: 1...16)
        requestTimeout = try apns.seconds("requestTimeout", default: requestTimeout, in: 1...300)
        circuitBreaker = try APNsCircuitBreaker.Configuration(reader: reader)
    }
}

/// Where a node sends APNs traffic.
public enum APNsRouting: Sendable {
    /// Apple's servers, by each push's environment, with each app's own credentials.
    case apple
    /// A local APNs sandbox for every environment. Every app's credentials are made known
    /// to the sandbox through `admit`; apps without credentials get generated ones, so
    /// their pushes show as APNs deliveries.
    case sandbox(SandboxTarget)

    public struct SandboxTarget: Sendable {
        public var host: String
        public var port: Int
        public var transport: APNsClient.Configuration.Transport
        /// Makes credentials acceptable to the sandbox (registers the key, trusts the certificate).
        public var admit: @Sendable (APNsCredentials) throws -> Void

        public init(
            host: String,
            port: Int,
            transport: APNsClient.Configuration.Transport,
            admit: @escaping @Sendable (APNsCredentials) throws -> Void
        ) {
            self.host = host
            self.port = port
            self.transport = transport
            self.admit = admit
        }
    }

    /// A client's configuration for `environment`: Apple's host for it, or the sandbox.
    func clientConfiguration(environment: APNsEnvironment) -> APNsClient.Configuration {
        switch self {
        case .apple: APNsClient.Configuration(environment: environment)
        case .sandbox(let target): APNsClient.Configuration(host: target.host, port: target.port, transport: target.transport)
        }
    }
}
