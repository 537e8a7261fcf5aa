import HeraldCore

/// Settings of the MQTT gateway.
public struct GatewayConfiguration: Sendable {
    /// This node's name, on the sessions of the devices connected here
    /// (``NodeConfiguration/nodeID``).
    public var nodeID: String = NodeConfiguration.defaultNodeID
    /// Connections closed per second when the gateway stops (``ClusterConfiguration/drainRate``).
    public var drainRate: Int = ClusterConfiguration().drainRate
    /// Address and port of the plain TCP listener (port 0 picks a free one).
    public var host: String
    public var port: Int
    /// The CONNECT must arrive this soon after the TCP accept.
    public var connectTimeout: Duration
    /// Keepalive bounds: a client's keepalive is enforced at 1.5× its value, within these.
    public var minimumKeepAlive: Duration
    public var maximumKeepAlive: Duration
    /// Unacknowledged messages in flight per connection.
    public var maxInFlight: Int
    /// Messages queued per connection behind the in-flight window. Stored messages beyond it
    /// wait in the inbox and are read as the window frees; more messages that aren't stored
    /// (time to live 0) close the connection.
    public var maxQueued: Int
    /// Stored messages read from a device's inbox at a time: a device with more gets the
    /// next page as its acknowledgements free the window (at most `maxQueued`).
    public var replayPageSize: Int
    /// Largest MQTT packet accepted from a device.
    public var maxPacketSize: Int
    /// How long authentication results are cached, so a reconnect storm doesn't become a query storm.
    public var authCacheTTL: Duration
    /// How long a CONNECT waits for the database to check its credentials; past it the
    /// device gets CONNACK 3 (server unavailable) and retries later.
    public var authTimeout: Duration
    /// How failed CONNECTs are slowed down (guessing of device secrets).
    public var authThrottle: AuthThrottle
    /// A connection whose outbound buffer stays full this long is closed.
    public var slowConsumerTimeout: Duration
    /// Connections accepted per event-loop tick (NIO's default is 4).
    public var acceptsPerTick: Int
    /// The optional TLS listener (MQTT over TLS, port 8883 by default).
    public var tls: TLSListener?
    /// A plaintext connection with nothing under way for this long gives up its channel and
    /// waits in the gateway's parking lot, a record of a hundred bytes, until its device or
    /// Herald has something for it; nil: never. See ``ParkingLot``.
    public var parkAfter: Duration?

    /// The brake on failed authentication: past `freeFailures` failures of one
    /// registration id or from one address, each failure is answered after a delay that
    /// starts at `initialDelay` and doubles, up to `maximumDelay`. A key whose last failure
    /// is `forgetAfter` old starts again; at most `maximumKeys` keys are kept.
    public struct AuthThrottle: Sendable {
        public var freeFailures: Int
        public var initialDelay: Duration
        public var maximumDelay: Duration
        public var forgetAfter: Duration
        public var maximumKeys: Int

        public init(
            freeFailures: Int = 5,
            initialDelay: Duration = .seconds(1),
            maximumDelay: Duration = .seconds(20),
            forgetAfter: Duration = .seconds(900),
            maximumKeys: Int = 100_000
        ) {
            self.freeFailures = freeFailures
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
            self.forgetAfter = forgetAfter
            self.maximumKeys = maximumKeys
        }
    }

    /// A TLS listener: the certificate chain and private key, in PEM.
    public struct TLSListener: Sendable {
        public var host: String
        public var port: Int
        public var certificateChainPEM: String
        public var privateKeyPEM: String

        public init(host: String = "0.0.0.0", port: Int = 8883, certificateChainPEM: String, privateKeyPEM: String) {
            self.host = host
            self.port = port
            self.certificateChainPEM = certificateChainPEM
            self.privateKeyPEM = privateKeyPEM
        }
    }

    public init(
        host: String = "0.0.0.0",
        port: Int = 1883,
        connectTimeout: Duration = .seconds(5),
        minimumKeepAlive: Duration = .seconds(10),
        maximumKeepAlive: Duration = .seconds(1800),
        maxInFlight: Int = 32,
        maxQueued: Int = 1000,
        replayPageSize: Int = 500,
        maxPacketSize: Int = 64 * 1024,
        authCacheTTL: Duration = .seconds(60),
        authTimeout: Duration = .seconds(3),
        authThrottle: AuthThrottle = AuthThrottle(),
        slowConsumerTimeout: Duration = .seconds(30),
        acceptsPerTick: Int = 256,
        tls: TLSListener? = nil,
        parkAfter: Duration? = .seconds(10)
    ) {
        self.host = host
        self.port = port
        self.connectTimeout = connectTimeout
        self.minimumKeepAlive = minimumKeepAlive
        self.maximumKeepAlive = maximumKeepAlive
        self.maxInFlight = maxInFlight
        self.maxQueued = maxQueued
        self.replayPageSize = replayPageSize
        self.maxPacketSize = maxPacketSize
        self.authCacheTTL = authCacheTTL
        self.authTimeout = authTimeout
        self.authThrottle = authThrottle
        self.slowConsumerTimeout = slowConsumerTimeout
        self.acceptsPerTick = acceptsPerTick
        self.tls = tls
        self.parkAfter = parkAfter
    }

    /// The silence after which a client with `keepAlive` seconds is disconnected.
    func keepAliveDeadline(clientKeepAlive: UInt16) -> Duration {
        guard clientKeepAlive > 0 else { return maximumKeepAlive }
        let enforced = Duration.milliseconds(Int64(clientKeepAlive) * 1500)
        return min(max(enforced, minimumKeepAlive), maximumKeepAlive)
    }
}
