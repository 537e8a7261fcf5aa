import Foundation
import HeraldCore
import Logging
import PostgresNIO

/// People (migration 0035): console users, their roles, their sessions. On the durable
/// pool, with the API's (``APIStore/people``).
public struct PeopleStore: StoreFacade {
    let core: StoreCore

    static let userColumns =
        """
        u.id, u.email, u.name, u.instance_role, u.password_hash IS NOT NULL, u.oidc_subject, u.created_at, u.disabled_at,
        COALESCE((SELECT array_agg(a.app_key || '=' || r.role ORDER BY a.app_key) FROM user_app_roles r JOIN apps a ON a.id = r.app_id
                  WHERE r.user_id = u.id), '{}')
        """

    typealias UserRow = (Int64, String, String, String?, Bool, String?, Date, Date?, [String])

    static func person(_ row: UserRow) -> Person {
        var roles: [String: Role] = [:]
        for pair in row.8 {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let role = Role(rawValue: String(parts[1])) { roles[String(parts[0])] = role }
        }
        return Person(
            id: row.0,
            email: row.1,
            name: row.2,
            instanceRole: row.3.flatMap(Role.init(rawValue:)),
            appRoles: roles,
            hasPassword: row.4,
            oidcSubject: row.5,
            createdAt: row.6,
            disabledAt: row.7
        )
    }

    /// Creates a console user.
    /// - Throws: `conflict` when a user has that email (or OpenID Connect identity).
    public func createUser(_ spec: PersonSpec) async throws -> Person {
        do {
            let rows = try await client.query(
                """
                WITH u AS (
                    INSERT INTO users (email, name, password_hash, instance_role, oidc_subject)
                    VALUES (\(spec.email), \(spec.name), \(spec.passwordHash), \(spec.instanceRole?.rawValue), \(spec.oidcSubject))
                    RETURNING *
                )
                SELECT u.id, u.email, u.name, u.instance_role, u.password_hash IS NOT NULL, u.oidc_subject, u.created_at,
                       u.disabled_at, '{}'::text[]
                FROM u
                """,
                logger: logger
            )
            for try await row in rows.decode(UserRow.self) { return Self.person(row) }
        } catch  where Self.sqlState(error) == "23505" {
            throw HeraldError(.conflict, "email: a user with this email already exists")
        }
        throw HeraldError(.internalError, "the user was not created")
    }

    /// Every user, by email.
    public func users() async throws -> [Person] {
        let rows = try await client.query("SELECT \(unescaped: Self.userColumns) FROM users u ORDER BY u.email", logger: logger)
        var people: [Person] = []
        for try await row in rows.decode(UserRow.self) { people.append(Self.person(row)) }
        return people
    }

    /// The user with this email, or nil.
    public func user(email: String) async throws -> Person? {
        let rows = try await client.query(
            "SELECT \(unescaped: Self.userColumns) FROM users u WHERE u.email = \(email.lowercased())",
            logger: logger
        )
        for try await row in rows.decode(UserRow.self) { return Self.person(row) }
        return nil
    }

    /// The user with this id, or nil.
    public func user(id: Int64) async throws -> Person? {
        let rows = try await client.query("SELECT \(unescaped: Self.userColumns) FROM users u WHERE u.id = \(id)", logger: logger)
        for try await row in rows.decode(UserRow.self) { return Self.person(row) }
        return nil
    }

    /// The user bound to an OpenID Connect identity, or nil.
    public func user(oidcSubject: String) async throws -> Person? {
        let rows = try await client.query(
            "SELECT \(unescaped: Self.userColumns) FROM users u WHERE u.oidc_subject = \(oidcSubject)",
            logger: logger
        )
        for try await row in rows.decode(UserRow.self) { return Self.person(row) }
        return nil
    }

    /// Binds an OpenID Connect identity to the user (their first sign-in through it).
    /// - Throws: `conflict` when another user holds that identity.
    public func bind(oidcSubject: String, userID: Int64) async throws {
        do {
            try await client.query(
                "UPDATE users SET oidc_subject = \(oidcSubject) WHERE id = \(userID) AND oidc_subject IS NULL",
                logger: logger
            )
        } catch  where Self.sqlState(error) == "23505" {
            throw HeraldError(.conflict, "this OpenID Connect identity belongs to another user")
        }
    }

    /// The stored password hash of the enabled user with this email (nil: no such user, or
    /// one without a password, or disabled).
    public func passwordHash(email: String) async throws -> (userID: Int64, hash: String)? {
        let rows = try await client.query(
            """
            SELECT id, password_hash FROM users
            WHERE email = \(email.lowercased()) AND password_hash IS NOT NULL AND disabled_at IS NULL
            """,
            logger: logger
        )
        for try await (id, hash) in rows.decode((Int64, String).self) { return (id, hash) }
        return nil
    }

    /// Changes what is given of a user; nil leaves a field as it is (`instanceRole`:
    /// `.some(nil)` removes it). A user disabled, or given a new password, is signed out
    /// everywhere. Returns the user, nil when there is none.
    public func updateUser(
        id: Int64,
        name: String? = nil,
        passwordHash: String? = nil,
        instanceRole: Role?? = nil,
        disabled: Bool? = nil
    ) async throws -> Person? {
        try await transaction { connection in
            let rows = try await connection.query(
                """
                UPDATE users SET
                    name = COALESCE(\(name)::text, name),
                    password_hash = COALESCE(\(passwordHash)::text, password_hash),
                    instance_role = CASE WHEN \(instanceRole != nil) THEN \(instanceRole??.rawValue)::text ELSE instance_role END,
                    disabled_at = CASE WHEN \(disabled)::boolean IS NULL THEN disabled_at
                                       WHEN \(disabled ?? false) THEN COALESCE(disabled_at, now()) ELSE NULL END
                WHERE id = \(id) RETURNING id
                """,
                logger: logger
            )
            guard try await rows.count() > 0 else { return nil }
            if passwordHash != nil || disabled == true {
                try await connection.query(
                    "UPDATE user_sessions SET revoked_at = now() WHERE user_id = \(id) AND revoked_at IS NULL",
                    logger: logger
                )
            }
            return try await user(id: id, on: connection)
        }
    }

    /// Gives the user a role on the app, or takes it away (nil). False when there is no
    /// such user.
    public func setRole(_ role: Role?, userID: Int64, appID: Int64) async throws -> Bool {
        if let role {
            return try await client.query(
                """
                INSERT INTO user_app_roles (user_id, app_id, role) SELECT id, \(appID), \(role.rawValue) FROM users WHERE id = \(userID)
                ON CONFLICT (user_id, app_id) DO UPDATE SET role = excluded.role RETURNING user_id
                """,
                logger: logger
            ).count() > 0
        }
        try await client.query("DELETE FROM user_app_roles WHERE user_id = \(userID) AND app_id = \(appID)", logger: logger)
        return try await user(id: userID) != nil
    }

    /// Deletes a user and their sessions. False when there was none.
    /// - Throws: `conflict` while pushes they composed or decided are kept.
    public func deleteUser(id: Int64) async throws -> Bool {
        do {
            return try await client.query("DELETE FROM users WHERE id = \(id) RETURNING id", logger: logger).count() > 0
        } catch  where Self.sqlState(error) == "23503" {
            throw HeraldError(.conflict, "the user composed or approved pushes that are kept: disable them instead")
        }
    }

    private func user(id: Int64, on connection: PostgresConnection) async throws -> Person? {
        let rows = try await connection.query("SELECT \(unescaped: Self.userColumns) FROM users u WHERE u.id = \(id)", logger: logger)
        for try await row in rows.decode(UserRow.self) { return Self.person(row) }
        return nil
    }
}
