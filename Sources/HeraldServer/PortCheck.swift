import HeraldAPI
import HeraldGateway
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A port `herald serve` listens on, with the setting that chooses it, so a taken port
/// is reported as the setting to change instead of a bind error from deep inside a
/// listener (or, for a listener that never ran, a crash).
struct ListenPort: Sendable {
    var host: String
    var port: Int
    /// The configuration key (`http.port`).
    var key: String
    /// How to change it (`HERALD_HTTP_PORT or --http-port`).
    var remedy: String

    /// Every port `configuration` listens on; port 0 (any free port) can't be taken.
    static func all(_ configuration: HeraldConfiguration) -> [ListenPort] {
        var ports = [
            ListenPort(host: configuration.api.host, port: configuration.api.port, key: "http.port", remedy: "set HERALD_HTTP_PORT or --http-port"),
            ListenPort(
                host: configuration.gateway.host,
                port: configuration.gateway.port,
                key: "mqtt.port",
                remedy: "set HERALD_MQTT_PORT or --mqtt-port"
            ),
        ]
        if let tls = configuration.gateway.tls {
            ports.append(ListenPort(host: tls.host, port: tls.port, key: "mqtt.tls.port", remedy: "set HERALD_MQTT_TLS_PORT"))
        }
        if configuration.apnsSandbox {
            let remedy = "or turn the sandbox off with HERALD_APNS_SANDBOX=off"
            ports.append(
                ListenPort(
                    host: "127.0.0.1",
                    port: configuration.apnsSandboxPort,
                    key: "apns.sandboxPort",
                    remedy: "set HERALD_APNS_SANDBOX_PORT \(remedy)"
                )
            )
            ports.append(
                ListenPort(
                    host: "127.0.0.1",
                    port: configuration.apnsSandboxInspectPort,
                    key: "apns.sandboxInspectPort",
                    remedy: "set HERALD_APNS_SANDBOX_INSPECT_PORT \(remedy)"
                )
            )
        }
        return ports.filter { $0.port != 0 }
    }

    /// Throws a ``StartupError`` naming the port and its setting when it can't be bound
    /// (checked before anything is started; a listener that still fails to bind later
    /// stops Herald the ordinary way).
    func ensureFree() async throws {
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port)
                .get()
        } catch let error as IOError {
            throw StartupError("\(key): cannot listen on \(host):\(port) (\(Self.reason(error))); \(remedy)")
        } catch {
            throw StartupError("\(key): cannot listen on \(host):\(port) (\(error)); \(remedy)")
        }
        try? await channel.close()
    }

    private static func reason(_ error: IOError) -> String {
        switch error.errnoCode {
        case EADDRINUSE: "the port is already in use"
        case EACCES: "permission denied"
        case EADDRNOTAVAIL: "no such local address"
        default: "\(error)"
        }
    }
}
