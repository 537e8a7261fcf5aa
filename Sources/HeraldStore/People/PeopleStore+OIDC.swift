import Foundation
import HeraldCore
import PostgresNIO

/// OpenID Connect sign-ins under way: kept in PostgreSQL so any node may take the callback.
extension PeopleStore {
    /// Remembers a sign-in just started.
    public func startOIDCSignIn(state: String, nonce: String, codeVerifier: String, console: Bool = false) async throws {
        try await client.query(
            """
            WITH old AS (DELETE FROM oidc_sign_ins WHERE created_at < now() - interval '1 hour')
            INSERT INTO oidc_sign_ins (state, nonce, code_verifier, console) VALUES (\(state), \(nonce), \(codeVerifier), \(console))
            """,
            logger: logger
        )
    }

    /// Takes the sign-in `state` names, if it started within `within`: once (a callback
    /// replayed finds nothing).
    public func takeOIDCSignIn(state: String, within: Duration) async throws -> (nonce: String, codeVerifier: String, console: Bool)? {
        let rows = try await client.query(
            """
            DELETE FROM oidc_sign_ins WHERE state = \(state)
            RETURNING nonce, code_verifier, console, created_at > now() - make_interval(secs => \(Double(within.components.seconds)))
            """,
            logger: logger
        )
        for try await (nonce, verifier, console, fresh) in rows.decode((String, String, Bool, Bool).self) where fresh {
            return (nonce, verifier, console)
        }
        return nil
    }
}
