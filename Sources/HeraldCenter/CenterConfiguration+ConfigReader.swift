import Configuration
import HeraldCore

extension CenterConfiguration {
    /// Reads the message center's settings, the channels' retry delays included, from Herald's
    /// configuration. Durations are whole seconds unless the key says otherwise.
    ///
    /// Configuration keys:
    /// - `center.workers` (int, default: 4, 1 to 64): concurrent fan-out workers.
    /// - `center.claimBatch` (int, default: 64, 1 to 10000): jobs a worker claims at once.
    /// - `center.batchSize` (int, default: 500, 1 to 100000): devices per fan-out batch (one
    ///   transaction each); also due channel retries claimed at once.
    /// - `center.ackTimeout` (int, default: 10, 1 to 300): how long a connected device has to
    ///   acknowledge before the notification goes to its channel (APNs, FCM).
    /// - `center.lease` (int, default: 30, 3 to 3600): a worker's hold on a job, renewed every
    ///   third of it; a job whose worker died is taken over after this.
    /// - `center.pollIntervalMs` (int, milliseconds, default: 1000, 10 to 60000): how often idle
    ///   workers look for jobs without a NOTIFY.
    /// - `center.spreadMinuteMs` (int, milliseconds, default: 60000, 100 to 60000): how long
    ///   one minute of a push's `big_push_duration` lasts; shorter only for tests.
    /// - `center.inboxPurgeInterval` (int, default: 60, 1 to 86400): how often expired inbox
    ///   rows and messages past their retention are deleted.
    /// - `center.messageRetentionDays` (int, days, default: 30, 11 to 3650): how long a message
    ///   and its delivery report are kept.
    /// - `center.schedulePollIntervalMs` (int, milliseconds, default: 5000, 10 to 600000): how
    ///   often the scheduler looks for due schedules when nothing wakes it sooner.
    /// - `center.scheduleGrace` (int, default: 3600, 0 to 604800): how late an occurrence
    ///   due while no scheduler ran may fire when one comes back; a later one is recorded
    ///   missed.
    /// - `center.eventRetention` (int, default: 604800, 60 to 31536000): how long delivery events
    ///   are kept.
    /// - `center.webhookRetryFor` (int, default: 86400, 1 to 604800): how long a webhook batch or
    ///   callback request is retried before it is given up.
    /// - `center.webhookRetryDelayMs` (int, milliseconds, default: 1000, 10 to 600000): first
    ///   retry delay, doubling per failure.
    /// - `center.webhookMaxRetryDelay` (int, default: 300, 1 to 86400): the longest wait between
    ///   two attempts.
    /// - `center.webhookTimeout` (int, default: 10, 1 to 120): how long one request may take.
    /// - `center.webhookPollIntervalMs` (int, milliseconds, default: 500, 10 to 60000): how often
    ///   idle senders look for events and due retries.
    /// - `center.webhookBatch` (int, default: 100, 1 to 1000): events per webhook request.
    /// - `center.webhookConcurrency` (int, default: 8, 1 to 256): endpoints sent to at once, and
    ///   callback requests in flight, per node.
    /// - `apns.retryDelay` (int, default: 5, 1 to 3600): first retry delay of a copy a channel
    ///   could not take now, doubling per attempt (the key keeps the name of the first channel
    ///   it applied to; FCM's copies follow it too).
    /// - `apns.maxRetryDelay` (int, default: 300, 1 to 86400, at least `apns.retryDelay`): the
    ///   longest wait between two attempts of a copy.
    ///
    /// The APNs channel's own keys are read by `APNsChannelConfiguration(reader:)`.
    ///
    /// - Parameters:
    ///   - reader: Herald's configuration (not scoped: the keys are at its root).
    ///   - node: the node's shared settings; the center takes the node id, recall window and
    ///     outbound address rule.
    /// - Throws: ``ConfigurationError`` naming the key of a value out of range.
    public init(reader: ConfigReader, node: NodeConfiguration) throws {
        let center = ConfigSection(reader, "center")
        let apns = ConfigSection(reader, "apns")
        self.init()
        nodeID = node.nodeID
        recallWindow = node.recallWindow
        outbound = node.outbound
        workers = try center.int("workers", default: workers, in: 1...64)
        claimBatch = try center.int("claimBatch", default: claimBatch, in: 1...10_000)
        batchSize = try center.int("batchSize", default: batchSize, in: 1...100_000)
        ackTimeout = try center.seconds("ackTimeout", default: ackTimeout, in: 1...300)
        lease = try center.seconds("lease", default: lease, in: 3...3600)
        pollInterval = try center.milliseconds("pollIntervalMs", default: pollInterval, in: 10...60_000)
        spreadMinute = try center.milliseconds("spreadMinuteMs", default: spreadMinute, in: 100...60_000)
        inboxPurgeInterval = try center.seconds("inboxPurgeInterval", default: inboxPurgeInterval, in: 1...86_400)
        // Longer than the longest time to live (10 days) and recall window.
        let retentionDays = try center.int(
            "messageRetentionDays",
            default: Int(messageRetention.components.seconds) / 86_400,
            in: 11...3650,
            unit: "days"
        )
        messageRetention = .seconds(retentionDays * 86_400)
        schedulePollInterval = try center.milliseconds("schedulePollIntervalMs", default: schedulePollInterval, in: 10...600_000)
        scheduleGrace = try center.seconds("scheduleGrace", default: scheduleGrace, in: 0...604_800)
        eventRetention = try center.seconds("eventRetention", default: eventRetention, in: 60...31_536_000)
        retryDelay = try apns.seconds("retryDelay", default: retryDelay, in: 1...3600)
        maxRetryDelay = try apns.seconds("maxRetryDelay", default: maxRetryDelay, in: 1...86_400)
        guard retryDelay <= maxRetryDelay else {
            throw apns.error("retryDelay", "must not be more than \(apns.key("maxRetryDelay"))")
        }
    }
}
