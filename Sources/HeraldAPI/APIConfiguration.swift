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

    public init(host: String = "0.0.0.0", port: Int = 8080, maxBodySize: Int = 1 << 20, adminToken: String) {
        self.host = host
        self.port = port
        self.maxBodySize = maxBodySize
        self.adminToken = adminToken
    }
}
