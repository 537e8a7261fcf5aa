import Foundation
import NIOCore
import NIOSSL
import PostgresNIO

/// A PostgreSQL connection URL: `postgres://user:password@host:port/database?sslmode=...`.
public struct DatabaseURL: Sendable, Hashable, CustomStringConvertible {
    /// How TLS is used, as in libpq's `sslmode`.
    public enum TLSMode: String, Sendable, Hashable {
        case disable, prefer, require
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tlsMode: TLSMode

    public init(host: String, port: Int = 5432, username: String, password: String?, database: String, tlsMode: TLSMode = .prefer) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tlsMode = tlsMode
    }

    /// Parses a `postgres://` or `postgresql://` URL.
    public init(_ string: String) throws(DatabaseURLError) {
        guard let components = URLComponents(string: string), let scheme = components.scheme,
            ["postgres", "postgresql"].contains(scheme)
        else {
            throw DatabaseURLError(reason: "expected postgres://user:password@host:port/database")
        }
        guard let host = components.host, !host.isEmpty else { throw DatabaseURLError(reason: "no host") }
        guard let user = components.user, !user.isEmpty else { throw DatabaseURLError(reason: "no user name") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        let sslmode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer"
        let mode: TLSMode
        switch sslmode {
        case "disable", "allow": mode = .disable
        case "prefer": mode = .prefer
        case "require", "verify-ca", "verify-full": mode = .require
        default: throw DatabaseURLError(reason: "unknown sslmode '\(sslmode)'")
        }
        self.init(
            host: host,
            port: components.port ?? 5432,
            username: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database.isEmpty ? user : database,
            tlsMode: mode
        )
    }

    /// The URL without its password, for logs and error messages.
    public var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)?sslmode=\(tlsMode.rawValue)"
    }

    /// The URL with its password, for handing to another process.
    public var urlString: String {
        let user = username.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? username
        let secret = password.map { ":" + ($0.addingPercentEncoding(withAllowedCharacters: .urlPasswordAllowed) ?? $0) } ?? ""
        return "postgres://\(user)\(secret)@\(host):\(port)/\(database)?sslmode=\(tlsMode.rawValue)"
    }

    /// The same server, another database.
    public func with(database: String) -> DatabaseURL {
        var copy = self
        copy.database = database
        return copy
    }

    /// Configuration for a pooled client.
    /// - Parameter synchronousCommit: false for work that is derived from durable data and
    ///   redone if lost (see the server's composition): its commits don't wait for the WAL flush.
    /// - Parameter connectTimeout: how long one connection attempt may take. A pool whose
    ///   attempt failed queues every query until a retry succeeds, even with idle connections
    ///   (postgres-nio 1.33), so this is a bound on a hung attempt, not on a slow one.
    public func clientConfiguration(
        maximumConnections: Int = 20,
        synchronousCommit: Bool = true,
        connectTimeout: Duration = .seconds(5)
    ) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch tlsMode {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
        var configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: tls
        )
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = connectTimeout
        if !synchronousCommit {
            configuration.options.additionalStartupParameters = [("synchronous_commit", "off")]
        }
        return configuration
    }

    /// Configuration for a single connection (migrations, the start-up probe).
    /// - Parameter connectTimeout: how long the connection, its TLS and its startup may take.
    public func connectionConfiguration(connectTimeout: Duration = .seconds(5)) throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch tlsMode {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        var configuration = PostgresConnection.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: tls
        )
        configuration.options.connectTimeout = TimeAmount(connectTimeout)
        return configuration
    }
}

/// A database URL that doesn't parse.
public struct DatabaseURLError: Error, Hashable, CustomStringConvertible {
    public let reason: String
    public var description: String { "invalid database URL: \(reason)" }
}
