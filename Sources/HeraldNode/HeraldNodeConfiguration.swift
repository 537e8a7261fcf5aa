import HeraldAPI
import HeraldCenter
import HeraldGateway
import HeraldStore

/// The configuration of a whole node: each component's, and what they share.
public struct HeraldNodeConfiguration: Sendable {
    /// Where the database is and how the node's pools use it.
    public struct Database: Sendable {
        public var url: DatabaseURL
        /// Connections in each of the two pools (the API's; the gateway and center's).
        public var poolSize: Int
        /// How long one connection attempt may take.
        public var connectTimeout: Duration
        /// Whether an API request stuck on a database that is down is answered 503 after
        /// ``APIConfiguration/databaseWait`` (checked with a fresh connection).
        public var boundedWait: Bool

        public init(url: DatabaseURL, poolSize: Int = 20, connectTimeout: Duration = .seconds(5), boundedWait: Bool = true) {
            self.url = url
            self.poolSize = poolSize
            self.connectTimeout = connectTimeout
            self.boundedWait = boundedWait
        }
    }

    public var database: Database
    public var api: APIConfiguration
    public var gateway: GatewayConfiguration
    public var center: CenterConfiguration

    /// This node's name: the jobs it leases and the connections it holds are recorded
    /// under it. Set once here, for the gateway and the center.
    public var nodeID: String {
        get { center.nodeID }
        set {
            center.nodeID = newValue
            gateway.nodeID = newValue
        }
    }

    /// How long after sending a message can be recalled: the API refuses older recalls, the
    /// center sends recall commands within it. Set once here, for both.
    public var recallWindow: Duration {
        get { center.recallWindow }
        set {
            center.recallWindow = newValue
            api.recallWindow = newValue
        }
    }

    public init(
        database: Database,
        api: APIConfiguration,
        gateway: GatewayConfiguration = GatewayConfiguration(),
        center: CenterConfiguration = CenterConfiguration(),
        nodeID: String,
        recallWindow: Duration = .seconds(24 * 3600)
    ) {
        self.database = database
        self.api = api
        self.gateway = gateway
        self.center = center
        self.nodeID = nodeID
        self.recallWindow = recallWindow
    }
}
