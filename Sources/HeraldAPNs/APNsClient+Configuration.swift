import Foundation
import HeraldCore
import NIOCore
import NIOPosix

extension APNsClient {
    /// How the client reaches APNs and how hard it pushes.
    public struct Configuration: Sendable {
        /// How connections are secured.
        public enum Transport: Sendable, Hashable {
            /// TLS with ALPN h2, trusting the system roots (real APNs).
            case tls
            /// TLS trusting only these PEM certificates (the sandbox's self-signed one).
            case tlsTrusting(certificatePEMs: [String])
            /// HTTP/2 over plain TCP (h2c), for the sandbox only.
            case plaintext
        }

        public var host: String
        public var port: Int = 443
        public var transport: Transport = .tls
        /// The TLS server name (SNI and verification); nil uses `host` unless it is an IP address.
        public var tlsServerName: String?
        /// Connections in the pool: 2 by default, clamped to 1...16.
        public var connectionCount: Int = 2 {
            didSet { connectionCount = min(max(connectionCount, 1), 16) }
        }
        /// Streams per connection at most, whatever the peer allows.
        public var maxStreamsPerConnection: Int = 1000
        /// Every send's deadline, retries included.
        public var requestTimeout: Duration = .seconds(10)
        /// The deadline of a request on a connection APNs hasn't yet answered a 200 on. A
        /// token connection carries one stream until its first success, so a first request
        /// that hangs would hold every send behind it for the whole ``requestTimeout``: past
        /// this, the connection is closed and the send tried on another (same `apns-id`),
        /// with the rest of its deadline.
        public var firstRequestTimeout: Duration = .seconds(3)
        public var connectTimeout: Duration = .seconds(10)
        /// Send a PING after this long without reading anything.
        public var pingInterval: Duration = .seconds(60)
        /// Close the connection when the PONG takes longer than this.
        public var pingTimeout: Duration = .seconds(10)
        /// Attempts per notification for transient failures (5xx, closed connections, GOAWAY).
        public var maxAttempts: Int = 3
        /// Wait before a retry on another connection, times the attempt number.
        public var retryBackoff: Duration = .milliseconds(100)
        /// When 5xx answers in a row stop requests for a while (``APNsCircuitBreaker``).
        public var circuitBreaker = APNsCircuitBreaker.Configuration()
        /// Reconnect backoff: doubles from the minimum after each failed connect, up to the maximum.
        public var reconnectBackoff: (minimum: Duration, maximum: Duration) = (.milliseconds(100), .seconds(30))
        public var eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
        /// The clock token age is judged by.
        public var now: @Sendable () -> Date = { Date() }

        /// Real APNs for this environment.
        public init(environment: APNsEnvironment) {
            switch environment {
            case .production: host = "api.push.apple.com"
            case .sandbox: host = "api.sandbox.push.apple.com"
            }
        }

        /// Any APNs-compatible server, such as the sandbox.
        public init(host: String, port: Int, transport: Transport) {
            self.host = host
            self.port = port
            self.transport = transport
        }
    }
}
