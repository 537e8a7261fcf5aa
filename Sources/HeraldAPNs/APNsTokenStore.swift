import Foundation
import NIOConcurrencyHelpers

/// The one provider token of a key, shared by every connection of the client.
///
/// Refresh is single-flight: signing happens under the lock, so concurrent callers see
/// the same new token and never sign one each.
final class APNsTokenStore: Sendable {
    private let signer: APNsTokenSigner
    private let policy: APNsTokenPolicy
    private let now: @Sendable () -> Date
    private let state = NIOLockedValueBox<(token: APNsProviderToken?, signed: Int)>((nil, 0))

    init(signer: APNsTokenSigner, policy: APNsTokenPolicy, now: @escaping @Sendable () -> Date) {
        self.signer = signer
        self.policy = policy
        self.now = now
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

    /// How many tokens were signed so far.
    var signedCount: Int { state.withLockedValue { $0.signed } }
}
