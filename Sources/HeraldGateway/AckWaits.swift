/// The deliveries of one connection whose outcome someone waits for, each wait with the
/// ticket of its deadline (``AckDeadlines``).
///
/// A value type that says whom to tell and leaves the telling to the connection, so the
/// rules (an acknowledged delivery never times out; a deadline ends only the wait it was
/// set for, not a later one for the same delivery) are tested without a connection.
struct AckWaits<Receiver> {
    private var waits: [DeliveryKey: (receiver: Receiver, ticket: UInt64)] = [:]

    /// Waits open.
    var count: Int { waits.count }

    /// Opens a wait for `key` with its deadline's `ticket`; returns the receiver of an
    /// earlier wait for the same delivery, which this one replaces.
    mutating func wait(for key: DeliveryKey, _ receiver: Receiver, ticket: UInt64) -> Receiver? {
        waits.updateValue((receiver, ticket), forKey: key)?.receiver
    }

    /// The device acknowledged `key`: ends its wait and returns who waited, if anyone.
    mutating func acknowledged(_ key: DeliveryKey) -> Receiver? {
        waits.removeValue(forKey: key)?.receiver
    }

    /// The deadline with `ticket` passed: ends the wait it was set for and returns who
    /// waited; nil if that wait already ended (acknowledged, or replaced by a later one).
    mutating func deadlinePassed(_ key: DeliveryKey, ticket: UInt64) -> Receiver? {
        guard let wait = waits[key], wait.ticket == ticket else { return nil }
        waits[key] = nil
        return wait.receiver
    }

    /// Whether the wait with this ticket is still open.
    func awaits(_ key: DeliveryKey, ticket: UInt64) -> Bool {
        waits[key]?.ticket == ticket
    }

    /// Ends every wait (the connection closed); returns who waited.
    mutating func removeAll() -> [Receiver] {
        let receivers = waits.values.map(\.receiver)
        waits = [:]
        return receivers
    }
}
