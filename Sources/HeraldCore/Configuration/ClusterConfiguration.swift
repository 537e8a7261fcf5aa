import Configuration

/// How a node takes part in a cluster of nodes on one database: its heartbeat, when a
/// silent node counts as dead, and how fast a draining node lets its devices go.
public struct ClusterConfiguration: Sendable, Hashable {
    /// How often the node renews its heartbeat (and sweeps dead nodes, and checks that no
    /// other node took its devices over unnoticed).
    public var heartbeatInterval: Duration
    /// A node whose heartbeat is older than this is dead: its devices are offline and what
    /// was routed to it is taken over. A node that stopped this long (paused, say) closes
    /// its connections when it wakes.
    public var deadAfter: Duration
    /// Device connections a draining node closes per second (SIGTERM), so they reconnect
    /// to other nodes without a thundering herd.
    public var drainRate: Int
    /// How long a node told to stop fails its readiness while still serving, before it
    /// stops anything: long enough for load balancers to notice.
    public var drainDelay: Duration
    /// Where its peers reach this node's HTTP API (`host:port`), to ask it directly whether
    /// it reaches the database when they can't. Nil: the API's listening address, or the
    /// host name when it listens on every interface.
    public var advertiseAddress: String?

    public init(
        heartbeatInterval: Duration = .seconds(2),
        deadAfter: Duration = .seconds(10),
        drainRate: Int = 500,
        drainDelay: Duration = .seconds(5),
        advertiseAddress: String? = nil
    ) {
        self.heartbeatInterval = heartbeatInterval
        self.deadAfter = deadAfter
        self.drainRate = drainRate
        self.drainDelay = drainDelay
        self.advertiseAddress = advertiseAddress
    }
}

extension ClusterConfiguration {
    /// Reads the `cluster` section of Herald's configuration.
    ///
    /// Configuration keys:
    /// - `cluster.heartbeatInterval` (int, seconds, default: 2, 1 to 60).
    /// - `cluster.deadAfter` (int, seconds, default: 10, 3 to 600, at least three
    ///   heartbeat intervals).
    /// - `cluster.drainRate` (int, connections per second, default: 500, 1 to 100000).
    /// - `cluster.drainDelay` (int, seconds, default: 5, 0 to 300).
    /// - `cluster.advertiseAddress` (string, `host:port`, default: unset; see
    ///   ``advertiseAddress``).
    ///
    /// - Parameter reader: Herald's configuration (not scoped: the section is read here).
    /// - Throws: ``ConfigurationError`` naming the key of a value out of range.
    public init(reader: ConfigReader) throws {
        let section = ConfigSection(reader, "cluster")
        let defaults = ClusterConfiguration()
        let heartbeat = try section.seconds("heartbeatInterval", default: defaults.heartbeatInterval, in: 1...60)
        let deadAfter = try section.seconds("deadAfter", default: defaults.deadAfter, in: 3...600)
        guard deadAfter >= heartbeat * 3 else {
            throw section.error("deadAfter", "must be at least three heartbeat intervals (cluster.heartbeatInterval)")
        }
        self.init(
            heartbeatInterval: heartbeat,
            deadAfter: deadAfter,
            drainRate: try section.int("drainRate", default: defaults.drainRate, in: 1...100_000),
            drainDelay: try section.seconds("drainDelay", default: defaults.drainDelay, in: 0...300),
            advertiseAddress: try Self.address(section, "advertiseAddress")
        )
    }

    /// `host:port` (a bracketed IPv6 host), or unset.
    private static func address(_ section: ConfigSection, _ key: String) throws -> String? {
        guard let value = section.optionalString(key) else { return nil }
        guard let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]), (1...65535).contains(port),
            colon != value.startIndex, !value.contains("/")
        else {
            throw section.error(key, "must be host:port, e.g. herald-1.internal:8080 or [fd00::1]:8080")
        }
        return value
    }

    /// The address peers reach a node at whose API listens on `host`, `port`: the host
    /// itself unless it is a wildcard, else `hostName`.
    public func advertisedAddress(listeningOn host: String, port: Int, hostName: String) -> String {
        if let advertiseAddress { return advertiseAddress }
        let reachable = ["0.0.0.0", "::", "[::]", "", "*"].contains(host) ? hostName : host
        return reachable.contains(":") && !reachable.hasPrefix("[") ? "[\(reachable)]:\(port)" : "\(reachable):\(port)"
    }
}
