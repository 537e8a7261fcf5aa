import Crypto
import Foundation
import NIOConcurrencyHelpers

/// The one provider token of a signing key (team id, key id), shared by every connection
/// of every client that signs with that key: an app's production and sandbox clients use
/// the same token, as Apple asks (a second token for the same key counts as a token change).
///
/// Refresh is single-flight: signing happens under the lock, so concurrent callers see
/// the same new token and never sign one each.
public final class APNsTokenStore: Sendable {
    /// The key's id (the JWT's `kid`).
    public var keyID: String { signer.keyID }
    /// The team id (the JWT's `iss`).
    public var teamID: String { signer.teamID }

    private let signer: APNsTokenSigner
    private let policy: APNsTokenPolicy
    private let now: @Sendable () -> Date
    private let state = NIOLockedValueBox<(token: APNsProviderToken?, signed: Int)>((nil, 0))
    /// The last token APNs called expired that was reported (logged once per token).
    private let reportedExpiry = NIOLockedValueBox<APNsProviderToken?>(nil)

    /// - Parameters:
    ///   - privateKeyPEM: the .p8 key.
    ///   - now: the clock token age is judged by.
    /// - Throws: ``APNsError/invalidCredentials`` when the key doesn't parse.
    public convenience init(keyID: String, teamID: String, privateKeyPEM: String, now: @escaping @Sendable () -> Date = { Date() }) throws {
        let signer: APNsTokenSigner
        do {
            signer = try APNsTokenSigner(keyID: keyID, teamID: teamID, privateKeyPEM: privateKeyPEM)
        } catch {
            throw APNsError(.invalidCredentials, detail: "\(error)")
        }
        self.init(signer: signer, policy: APNsTokenPolicy(), now: now)
    }

    init(signer: APNsTokenSigner, policy: APNsTokenPolicy, now: @escaping @Sendable () -> Date) {
        self.signer = signer
        self.policy = policy
        self.now = now
    }

    /// Whether this store signs with exactly this key (same ids and private key).
    public func signs(keyID: String, teamID: String, privateKeyPEM: String) -> Bool {
        guard keyID == signer.keyID, teamID == signer.teamID else { return false }
        return (try? APNsTokenSigner(keyID: keyID, teamID: teamID, privateKeyPEM: privateKeyPEM)) == signer
    }

    /// The current token, signing a new one when there is none or it reached the refresh age.
    func current() throws -> APNsProviderToken {
        let now = now()
        return try state.withLockedValue { state in
            if let token = state.token, now.timeIntervalSince(token.issuedAt) < policy.refreshAge { return token }
            let token = try signer.sign(issuedAt: now)
            state.token = token
            state.signed += 1
            return token
        }
    }

    /// APNs called `rejected` expired. Signs a new token only if `rejected` is still the
    /// current one and is older than the minimum change interval; returns whether the
    /// current token now differs from `rejected`.
    func refresh(afterExpiry rejected: APNsProviderToken) throws -> Bool {
        let now = now()
        return try state.withLockedValue { state in
            guard state.token == rejected else { return true }
            guard now.timeIntervalSince(rejected.issuedAt) >= policy.minimumChangeInterval else { return false }
            state.token = try signer.sign(issuedAt: now)
            state.signed += 1
            return true
        }
    }

    /// Whether `rejected` is a token APNs called expired for the first time: each is
    /// reported once, however many requests carried it.
    func isFirstExpiry(of rejected: APNsProviderToken) -> Bool {
        reportedExpiry.withLockedValue { reported in
            guard reported != rejected else { return false }
            reported = rejected
            return true
        }
    }

    /// How many tokens were signed so far.
    public var signedCount: Int { state.withLockedValue { $0.signed } }
}
