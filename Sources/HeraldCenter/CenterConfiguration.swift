import Foundation
import HeraldAPNs
import HeraldCore

/// How the message center works.
public struct CenterConfiguration: Sendable {
    /// This node's name, recorded on the jobs it leases (``NodeConfiguration/nodeID``).
    public var nodeID: String = NodeConfiguration.defaultNodeID
    /// Concurrent fan-out workers on this node.
    public var workers: Int = 4
    /// Jobs a worker claims at once; fresh pushes among them share their commits.
    public var claimBatch: Int = 64
    /// Devices per fan-out batch (one transaction each).
    public var batchSize: Int = 500
    /// How long a device has to acknowledge over the MQTT connection before the
    /// notification goes to APNs.
    public var ackTimeout: Duration = .seconds(10)
    /// A worker's hold on a job; a job whose worker died is taken over after this.
    public var lease: Duration = .seconds(30)
    /// How often idle workers look for jobs without a NOTIFY (a missed one, a delayed retry).
    public var pollInterval: Duration = .seconds(1)
    /// How long one minute of `big_push_duration` lasts: a minute, shorter only so that a
    /// test can watch a spread push go out.
    public var spreadMinute: Duration = .seconds(60)
    /// How often inbox rows whose time to live passed, and messages older than
    /// `messageRetention`, are deleted.
    public var inboxPurgeInterval: Duration = .seconds(60)
    /// How long a message and its delivery report are kept after it was sent; older ones
    /// are deleted every `inboxPurgeInterval`. Longer than any time to live (10 days).
    public var messageRetention: Duration = .seconds(30 * 86_400)
    /// How long after sending a message can be recalled (``NodeConfiguration/recallWindow``).
    public var recallWindow: Duration = NodeConfiguration.defaultRecallWindow
    /// First APNs retry delay; doubles per attempt up to `apnsMaxRetryDelay`. A copy APNs
    /// can't take now (5xx, TooManyRequests, no answer) is retried until its time to live
    /// runs out, then expires.
    public var apnsRetryDelay: Duration = .seconds(5)
    /// The longest wait between two APNs attempts of a copy.
    public var apnsMaxRetryDelay: Duration = .seconds(300)
    /// How long an APNs send may take, retries on other connections included; a copy
    /// without an answer by then is retried later (reason `Timeout`).
    public var apnsRequestTimeout: Duration = .seconds(10)
    /// When APNs answering 5xx stops requests for a while (per app and environment).
    public var apnsCircuitBreaker = APNsCircuitBreaker.Configuration()
    /// APNs connections per app and environment (1 to 16).
    public var apnsConnections: Int = 2
    /// Where APNs traffic goes.
    public var apns: APNsRouting = .apple
    /// How often the scheduler looks for due schedules when it has no reason to wake
    /// earlier (a schedule due sooner, a changed schedule): what it finds late without a
    /// NOTIFY (another node's change it didn't hear of) is found by then.
    public var schedulePollInterval: Duration = .seconds(5)
    /// How late an occurrence may fire: one due while no scheduler ran (every node down)
    /// fires when one comes back if it is at most this late, else it is recorded missed.
    public var scheduleGrace: Duration = .seconds(3600)
    /// The scheduler's clock: what "now" is when it evaluates schedules (a test runs it
    /// fast or moves it; Herald uses the wall clock).
    public var scheduleClock: @Sendable () -> Date = { Date() }
    /// How long delivery events are kept (the event stream, webhooks, timelines); older ones
    /// are deleted every `inboxPurgeInterval`.
    public var eventRetention: Duration = .seconds(7 * 86_400)
    /// The addresses webhooks, callbacks and SMS providers may reach
    /// (``NodeConfiguration/outbound``), checked on every address a host resolves to.
    public var outbound = OutboundAddressRule()

    public init() {}
}

/// Where the center sends APNs traffic.
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
}
