import Foundation
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
    /// notification goes to its fallback channel (APNs, FCM).
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
    /// First retry delay of a copy a channel (APNs, FCM) could not take now (5xx, too many
    /// requests, no answer); doubles per attempt up to `maxRetryDelay`. The copy is retried
    /// until its time to live runs out, then expires.
    public var retryDelay: Duration = .seconds(5)
    /// The longest wait between two attempts of a copy over a channel.
    public var maxRetryDelay: Duration = .seconds(300)
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
