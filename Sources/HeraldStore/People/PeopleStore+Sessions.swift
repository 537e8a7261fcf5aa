import Foundation
import HeraldCore
import PostgresNIO

/// People's sessions: opened by a sign-in, ended by sign-out, expiry, or the user being
/// disabled or given a new password.
extension PeopleStore {
    static let sessionColumns =
        "s.session_id, s.user_id, s.method, s.created_at, s.expires_at, s.confirmed_at, host(s.address), s.revoked_at"

    typealias SessionRow = (String, Int64, String, Date, Date, Date, String?, Date?)

    static func session(_ row: SessionRow) -> PersonSession {
        PersonSession(
            sessionID: row.0,
            userID: row.1,
            method: row.2,
            createdAt: row.3,
            expiresAt: row.4,
            confirmedAt: row.5,
            address: row.6,
            revokedAt: row.7
        )
    }

    /// Opens a session for the user, lasting `lifetime`; its token is returned once and
    /// stored hashed.
    public func openSession(userID: Int64, method: String, lifetime: Duration, address: String?) async throws -> OpenedSession {
        let (sessionID, token) = APIKeyText.make(prefix: APIKeyText.sessionPrefix)
        let rows = try await client.query(
            """
            INSERT INTO user_sessions AS s (session_id, secret_hash, user_id, method, expires_at, address)
            VALUES (\(sessionID), \(Data(SecretHash.digest(token))), \(userID), \(method),
                    now() + make_interval(secs => \(Double(lifetime.components.seconds))), \(address)::inet)
            RETURNING \(unescaped: Self.sessionColumns)
            """,
            logger: logger
        )
        for try await row in rows.decode(SessionRow.self) { return OpenedSession(session: Self.session(row), token: token) }
        throw HeraldError(.internalError, "the session was not opened")
    }

    /// The live session whose token this is, with its user; nil when the token is wrong, or
    /// the session ended (expired, signed out, the user disabled).
    public func authenticateSession(token: String) async throws -> (session: PersonSession, person: Person)? {
        guard let sessionID = APIKeyText.id(of: token, prefix: APIKeyText.sessionPrefix) else { return nil }
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.sessionColumns), s.secret_hash, \(unescaped: Self.userColumns)
            FROM user_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.session_id = \(sessionID) AND s.revoked_at IS NULL AND s.expires_at > now() AND u.disabled_at IS NULL
            """,
            logger: logger
        )
        for try await row in rows {
            let columns = row.makeRandomAccess()
            guard SecretHash.matches(token, stored: Array(try columns[8].decode(Data.self))) else { return nil }
            let session = Self.session(
                (
                    try columns[0].decode(String.self), try columns[1].decode(Int64.self), try columns[2].decode(String.self),
                    try columns[3].decode(Date.self), try columns[4].decode(Date.self), try columns[5].decode(Date.self),
                    try columns[6].decode(String?.self), try columns[7].decode(Date?.self)
                )
            )
            let person = Self.person(
                (
                    try columns[9].decode(Int64.self), try columns[10].decode(String.self), try columns[11].decode(String.self),
                    try columns[12].decode(String?.self), try columns[13].decode(Bool.self), try columns[14].decode(String?.self),
                    try columns[15].decode(Date.self), try columns[16].decode(Date?.self), try columns[17].decode([String].self)
                )
            )
            return (session, person)
        }
        return nil
    }

    /// The person proved it was them again (their password): destructive actions are
    /// allowed for a few minutes. Returns the session, nil when it ended.
    public func confirmSession(_ sessionID: String) async throws -> PersonSession? {
        let rows = try await client.query(
            """
            UPDATE user_sessions s SET confirmed_at = now()
            WHERE s.session_id = \(sessionID) AND s.revoked_at IS NULL AND s.expires_at > now()
            RETURNING \(unescaped: Self.sessionColumns)
            """,
            logger: logger
        )
        for try await row in rows.decode(SessionRow.self) { return Self.session(row) }
        return nil
    }

    /// Ends a session (sign-out). False when it had ended already.
    public func revokeSession(_ sessionID: String) async throws -> Bool {
        try await client.query(
            "UPDATE user_sessions SET revoked_at = now() WHERE session_id = \(sessionID) AND revoked_at IS NULL RETURNING id",
            logger: logger
        ).count() > 0
    }

    /// The user's live sessions, newest first.
    public func sessions(userID: Int64) async throws -> [PersonSession] {
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.sessionColumns) FROM user_sessions s
            WHERE s.user_id = \(userID) AND s.revoked_at IS NULL AND s.expires_at > now() ORDER BY s.created_at DESC
            """,
            logger: logger
        )
        var sessions: [PersonSession] = []
        for try await row in rows.decode(SessionRow.self) { sessions.append(Self.session(row)) }
        return sessions
    }
}
