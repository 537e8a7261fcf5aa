import Configuration
import Foundation
import HeraldCore

extension GatewayConfiguration {
    /// Reads the MQTT gateway's settings from Herald's configuration. Durations are whole
    /// seconds.
    ///
    /// Configuration keys:
    /// - `mqtt.host` (string, default: `0.0.0.0`): address of the listeners.
    /// - `mqtt.port` (int, default: 1883): port of the plain TCP listener (0: a free one).
    /// - `mqtt.tls.certificate`, `mqtt.tls.key` (string, optional): PEM files of the
    ///   certificate chain and private key; with both set the gateway also listens over TLS.
    /// - `mqtt.tls.port` (int, default: 8883): port of the TLS listener.
    /// - `mqtt.connectTimeout` (int, default: 5, 1 to 300): the CONNECT must arrive this soon
    ///   after the TCP accept.
    /// - `mqtt.keepAlive.minimum`, `mqtt.keepAlive.maximum` (int, defaults: 10 and 1800, 1 to
    ///   86400, minimum ≤ maximum): bounds of the enforced keepalive (1.5× the client's).
    /// - `mqtt.maxInFlight` (int, default: 32, 1 to 65535): unacknowledged messages per
    ///   connection.
    /// - `mqtt.maxQueued` (int, default: 1000, 1 to 1000000): messages queued per connection
    ///   behind the in-flight window.
    /// - `mqtt.replayPageSize` (int, default: 500, 1 to 100000): stored messages read from a
    ///   device's inbox at a time (at most `mqtt.maxQueued` are).
    /// - `mqtt.maxPacketSize` (int, bytes, default: 65536, 1024 to 268435455): largest packet
    ///   accepted from a device.
    /// - `mqtt.slowConsumerTimeout` (int, default: 30, 1 to 3600): a connection whose outbound
    ///   buffer stays full this long is closed.
    /// - `mqtt.acceptsPerTick` (int, default: 256, 1 to 65536): connections accepted per
    ///   event-loop tick.
    /// - `mqtt.parkAfter` (int, default: 10, 0 to 3600; 0: never): a plaintext connection
    ///   with nothing under way this long is parked without its channel (see ``ParkingLot``).
    /// - `mqtt.auth.cacheTTL` (int, default: 60, 0 to 86400; 0: no cache): how long an
    ///   authentication result is reused.
    /// - `mqtt.auth.timeout` (int, default: 3, 1 to 60): how long a CONNECT waits for the
    ///   database to check its credentials (then CONNACK 3).
    /// - `mqtt.auth.throttle.freeFailures` (int, default: 5, 0 to 1000),
    ///   `mqtt.auth.throttle.initialDelay` (int, default: 1, 0 to 60),
    ///   `mqtt.auth.throttle.maximumDelay` (int, default: 20, 1 to 3600, at least the initial
    ///   delay), `mqtt.auth.throttle.forgetAfter` (int, default: 900, 1 to 86400),
    ///   `mqtt.auth.throttle.maximumKeys` (int, default: 100000, 1000 to 10000000): the brake
    ///   on failed CONNECTs (see ``AuthThrottle``).
    ///
    /// - Parameter reader: Herald's configuration (not scoped: the keys are at its root).
    /// - Throws: ``ConfigurationError`` naming the key of a value out of range, or of a TLS
    ///   file that can't be read.
    public init(reader: ConfigReader) throws {
        let mqtt = ConfigSection(reader, "mqtt")
        let keepAlive = mqtt.section("keepAlive")
        let auth = mqtt.section("auth")
        let defaults = GatewayConfiguration()
        let host = mqtt.string("host", default: defaults.host)
        self.init(
            host: host,
            port: try mqtt.port("port", default: defaults.port),
            connectTimeout: try mqtt.seconds("connectTimeout", default: defaults.connectTimeout, in: 1...300),
            minimumKeepAlive: try keepAlive.seconds("minimum", default: defaults.minimumKeepAlive, in: 1...86_400),
            maximumKeepAlive: try keepAlive.seconds("maximum", default: defaults.maximumKeepAlive, in: 1...86_400),
            maxInFlight: try mqtt.int("maxInFlight", default: defaults.maxInFlight, in: 1...65_535),
            maxQueued: try mqtt.int("maxQueued", default: defaults.maxQueued, in: 1...1_000_000),
            replayPageSize: try mqtt.int("replayPageSize", default: defaults.replayPageSize, in: 1...100_000),
            maxPacketSize: try mqtt.int("maxPacketSize", default: defaults.maxPacketSize, in: 1024...268_435_455, unit: "bytes"),
            authCacheTTL: try auth.seconds("cacheTTL", default: defaults.authCacheTTL, in: 0...86_400),
            authTimeout: try auth.seconds("timeout", default: defaults.authTimeout, in: 1...60),
            authThrottle: try AuthThrottle(section: auth.section("throttle")),
            slowConsumerTimeout: try mqtt.seconds("slowConsumerTimeout", default: defaults.slowConsumerTimeout, in: 1...3600),
            acceptsPerTick: try mqtt.int("acceptsPerTick", default: defaults.acceptsPerTick, in: 1...65_536),
            tls: try TLSListener(section: mqtt.section("tls"), host: host),
            parkAfter: try mqtt.seconds("parkAfter", default: defaults.parkAfter ?? .zero, in: 0...3600)
        )
        if parkAfter == .zero { parkAfter = nil }
        guard minimumKeepAlive <= maximumKeepAlive else {
            throw keepAlive.error("minimum", "must not be more than \(keepAlive.key("maximum"))")
        }
    }
}

extension GatewayConfiguration.AuthThrottle {
    /// Reads the `mqtt.auth.throttle.*` keys listed at ``GatewayConfiguration/init(reader:)``.
    init(section: ConfigSection) throws {
        let defaults = Self()
        self.init(
            freeFailures: try section.int("freeFailures", default: defaults.freeFailures, in: 0...1000),
            initialDelay: try section.seconds("initialDelay", default: defaults.initialDelay, in: 0...60),
            maximumDelay: try section.seconds("maximumDelay", default: defaults.maximumDelay, in: 1...3600),
            forgetAfter: try section.seconds("forgetAfter", default: defaults.forgetAfter, in: 1...86_400),
            maximumKeys: try section.int("maximumKeys", default: defaults.maximumKeys, in: 1000...10_000_000)
        )
        guard initialDelay <= maximumDelay else {
            throw section.error("initialDelay", "must not be more than \(section.key("maximumDelay"))")
        }
    }
}

extension GatewayConfiguration.TLSListener {
    /// Reads `mqtt.tls.certificate`, `mqtt.tls.key` and `mqtt.tls.port`, and the PEM files
    /// named; nil when neither file is set.
    init?(section: ConfigSection, host: String) throws {
        let certificatePath = section.optionalString("certificate")
        let keyPath = section.optionalString("key")
        let port = try section.port("port", default: Self(certificateChainPEM: "", privateKeyPEM: "").port)
        if (certificatePath == nil) != (keyPath == nil) {
            throw ConfigurationError(
                key: section.name,
                "set both \(section.key("certificate")) and \(section.key("key")) (PEM files), or neither"
            )
        }
        guard let certificatePath, let keyPath else { return nil }
        func read(_ path: String, key: String) throws -> String {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8),
                text.contains("-----BEGIN")
            else {
                throw section.error(key, "cannot read a PEM file at \(path)")
            }
            return text
        }
        self.init(
            host: host,
            port: port,
            certificateChainPEM: try read(certificatePath, key: "certificate"),
            privateKeyPEM: try read(keyPath, key: "key")
        )
    }
}
