/// Settings of the HTTP API.
public struct APIConfiguration: Sendable {
    /// Address to listen on.
    public var host: String
    /// Port to listen on (0 picks a free one).
    public var port: Int
    /// Largest request body accepted, in bytes.
    public var maxBodySize: Int
    /// Bearer token of the admin API.
    public var adminToken: String
    /// How long after sending a message can be recalled.
    public var recallWindow: Duration
    /// Where the message center sends APNs traffic, said wherever credentials are shown.
    public var apnsDestination: APNsDestination = .apple

    public init(
        host: String = "0.0.0.0",
        port: Int = 8080,
        maxBodySize: Int = 1 << 20,
        adminToken: String,
        recallWindow: Duration = .seconds(24 * 3600)
    ) {
        self.host = host
        self.port = port
        self.maxBodySize = maxBodySize
        self.adminToken = adminToken
        self.recallWindow = recallWindow
    }
}
