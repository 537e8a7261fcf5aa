import Foundation
import HeraldCore

extension APNsSandbox {
    /// How the sandbox listens and which rules it applies.
    public struct Configuration: Sendable {
        /// How connections are secured.
        public enum Transport: Sendable, Hashable {
            /// HTTP/2 over TLS with ALPN `h2` and a self-signed certificate made at start.
            case tls
            /// HTTP/2 over plain TCP with prior knowledge (h2c).
            case plaintext
        }

        /// Address to bind.
        public var host: String = "127.0.0.1"
        /// Port to bind; 0 lets the system choose (see ``APNsSandbox/port``).
        public var port: Int = 0
        public var transport: Transport = .tls
        /// The sandbox's clock: token age and churn are judged by it.
        public var now: @Sendable () -> Date = { Date() }
        /// SETTINGS_MAX_CONCURRENT_STREAMS after the first accepted request on a connection.
        public var maxConcurrentStreams: Int = 1000
        /// A provider token older than this is expired.
        public var tokenLifetime: TimeInterval = 3600
        /// A connection may change its token only after using the old one this long.
        public var minimumTokenChangeInterval: TimeInterval = 1200
        /// The top-level payload key whose identifiers a background push removes from the
        /// device's shown notifications (a simulated app honouring a recall).
        public var recallKey: String = "herald-recall"
        /// The APNs environment the sandbox plays (Apple has one host for each): a device
        /// token registered for the other one is refused with BadDeviceToken. Nil: any.
        public var environment: APNsEnvironment?

        public init() {}

        public init(transport: Transport, port: Int = 0) {
            self.transport = transport
            self.port = port
        }
    }
}
