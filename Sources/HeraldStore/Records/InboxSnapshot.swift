/// A device's unacknowledged messages as one statement saw them.
public struct InboxSnapshot: Sendable, Hashable {
    /// Unacknowledged, unexpired messages, oldest first.
    public var messages: [InboxMessage]
    /// Every seq up to this one is in `messages` or no longer pending (acknowledged,
    /// expired, recalled): the device's latest seq then, or the last message's when the
    /// snapshot stopped at its limit.
    public var through: Int64
    /// Whether `through` is the device's latest seq; false when the snapshot stopped at its
    /// limit and more messages may follow.
    public var isComplete: Bool
    /// The device's latest seq when the snapshot was read (`through` when complete).
    public var latest: Int64

    public init(messages: [InboxMessage], through: Int64, isComplete: Bool = true, latest: Int64? = nil) {
        self.messages = messages
        self.through = through
        self.isComplete = isComplete
        self.latest = latest ?? through
    }
}
