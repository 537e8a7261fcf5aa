import Foundation

/// One HTTP/2 request as the sandbox received it.
struct SandboxRequest: Sendable {
    var method: String
    var path: String
    /// Regular headers in arrival order, lowercase names (a request has about ten: a list
    /// beats a dictionary of arrays).
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first value of the header.
    func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// How many times the header came.
    func count(of name: String) -> Int {
        headers.reduce(0) { $0 + ($1.name == name ? 1 : 0) }
    }

    /// Whether any header came more than once.
    var hasDuplicateHeaders: Bool {
        for index in headers.indices where headers[(index + 1)...].contains(where: { $0.name == headers[index].name }) {
            return true
        }
        return false
    }
}

/// The answer to one request.
struct SandboxResponse: Error, Sendable, Hashable {
    var status: Int
    var apnsID: UUID
    var reason: String?
    /// Milliseconds since 1970, only with 410.
    var timestamp: Int64?

    static func success(_ apnsID: UUID) -> SandboxResponse {
        SandboxResponse(status: 200, apnsID: apnsID)
    }

    /// The JSON body, or nil for a success.
    var body: [UInt8]? {
        guard let reason else { return nil }
        var object: [String: Any] = ["reason": reason]
        if let timestamp { object["timestamp"] = timestamp }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { Array($0) }
    }
}

/// What the connection does with a request: the action the sandbox state chose.
struct SandboxDecision: Sendable {
    enum Action: Sendable {
        case respond(SandboxResponse)
        case respondAfter(Duration, SandboxResponse)
        case neverAnswer
        case goAway(reason: String)
    }

    var action: Action
    /// The first accepted request on this connection: raise SETTINGS_MAX_CONCURRENT_STREAMS.
    var raiseStreamLimit: Bool = false
}

/// What the sandbox knows about one connection's authentication.
struct SandboxConnectionAuth: Sendable {
    var connectionID: Int
    /// DER of the client certificate presented in the TLS handshake, if any.
    var clientCertificateDER: [UInt8]?
    /// The team of the first valid token: later tokens must come from it.
    var pinnedTeamID: String?
    /// The token in use and when the connection started using it.
    var currentToken: String?
    var currentTokenSince: Date?
    /// Whether a request was accepted on this connection.
    var hasAccepted = false
    /// `currentToken` parsed, to skip the shared cache's lookup.
    var currentParsedToken: SandboxProviderToken?

    init(connectionID: Int, clientCertificateDER: [UInt8]? = nil) {
        self.connectionID = connectionID
        self.clientCertificateDER = clientCertificateDER
    }
}
