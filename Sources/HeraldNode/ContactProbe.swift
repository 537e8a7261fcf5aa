import AsyncHTTPClient
import HeraldStore
import Logging
import NIOCore
import NIOHTTP1

/// How a node whose heartbeats fail tells "the database is down" from "my link to it is
/// cut" (``DatabaseContact``): it asks its peers directly, not through the database, and
/// then itself, on a fresh connection.
public protocol ContactProbe: Sendable {
    /// Whether the node whose HTTP API is at `address` (`host:port`) answers that it
    /// reaches the database, within `timeout`. False for no answer.
    func peerReachesDatabase(_ address: String, timeout: Duration) async -> Bool
    /// Whether this node reaches the database on a connection of its own (not its pools',
    /// which may be stuck on a dead link or waiting to reconnect), within `timeout`.
    func reachesDatabase(timeout: Duration) async -> Bool
}

/// Asks a peer's `GET /readyz` (200 when it is not draining and PostgreSQL answers it within
/// two seconds: a draining peer counts as one that doesn't, which errs on the side of
/// keeping the devices), and opens a connection of its own to `url`.
public struct DirectContactProbe: ContactProbe {
    let url: DatabaseURL
    let logger: Logger

    public init(url: DatabaseURL, logger: Logger) {
        self.url = url
        self.logger = logger
    }

    public func peerReachesDatabase(_ address: String, timeout: Duration) async -> Bool {
        var request = HTTPClientRequest(url: "http://\(address)/readyz")
        request.method = .GET
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .init(timeout))
            _ = try? await response.body.collect(upTo: 4096)
            return response.status == .ok
        } catch {
            return false
        }
    }

    public func reachesDatabase(timeout: Duration) async -> Bool {
        (try? await DatabaseProbe.withConnection(to: url, timeout: timeout, logger: logger) { _ in }) != nil
    }
}
