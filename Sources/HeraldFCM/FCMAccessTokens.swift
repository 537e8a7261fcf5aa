import Foundation
import HeraldCore

/// Why an access token could not be had.
public enum FCMCredentialError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token endpoint refused the assertion (`invalid_grant`, an unknown key, a bad
    /// signature): the credentials are wrong, retrying won't help.
    case refused(String)
    /// The token endpoint could not be asked (unreachable, 5xx): try again later.
    case unavailable(String)

    public var description: String {
        switch self {
        case .refused(let reason): "the token endpoint refused the service account: \(reason)"
        case .unavailable(let reason): "the token endpoint is unavailable: \(reason)"
        }
    }
}

/// Access tokens per service account, each asked for once and kept until shortly before it
/// expires (Google's last an hour): the sends of every copy share one. Concurrent sends
/// that find none wait for the one exchange under way. A 401 from FCM drops the token it
/// was sent with (``invalidate(_:token:)``), and the next send asks for a new one.
actor FCMAccessTokens {
    /// The account as its tokens' owner: the key itself too (a key file made again with
    /// the same id is another credential).
    struct Key: Hashable {
        var clientEmail: String
        var privateKeyID: String
        var tokenURI: String
        var privateKeyPEM: String

        init(_ account: FCMServiceAccount) {
            clientEmail = account.clientEmail
            privateKeyID = account.privateKeyID
            tokenURI = account.tokenURI
            privateKeyPEM = account.privateKeyPEM
        }
    }

    /// A token and how long it is valid, as the endpoint said.
    struct Issued: Sendable {
        var token: String
        var expiresIn: Duration
    }

    private enum Entry {
        case ready(token: String, refreshAt: ContinuousClock.Instant)
        case fetching(Task<Issued, any Error>)
        /// The endpoint refused the account: every send until then gets the same refusal
        /// without asking again (the sends of one batch race for it).
        case refused(FCMCredentialError, until: ContinuousClock.Instant)
    }

    /// How long a refusal is remembered.
    static let refusalMemory: Duration = .seconds(60)

    private var entries: [Key: Entry] = [:]
    private let exchange: @Sendable (FCMServiceAccount) async throws -> Issued

    init(exchange: @escaping @Sendable (FCMServiceAccount) async throws -> Issued) {
        self.exchange = exchange
    }

    /// How long before its expiry a token is replaced: five minutes, or half its life when
    /// that is shorter.
    static func margin(_ expiresIn: Duration) -> Duration {
        min(.seconds(300), expiresIn / 2)
    }

    /// `askingAgain`: a remembered refusal is not the answer (an upload is tried anew).
    func token(for account: FCMServiceAccount, askingAgain: Bool = false) async throws -> String {
        let key = Key(account)
        switch entries[key] {
        case .ready(let token, let refreshAt) where ContinuousClock.now < refreshAt:
            return token
        case .fetching(let task):
            return try await task.value.token
        case .refused(let error, let until) where ContinuousClock.now < until && !askingAgain:
            throw error
        default:
            break
        }
        let exchange = self.exchange
        let task = Task { try await exchange(account) }
        entries[key] = .fetching(task)
        do {
            let issued = try await task.value
            entries[key] = .ready(token: issued.token, refreshAt: .now + issued.expiresIn - Self.margin(issued.expiresIn))
            return issued.token
        } catch let error as FCMCredentialError {
            if case .refused = error {
                entries[key] = .refused(error, until: .now + Self.refusalMemory)
            } else {
                entries[key] = nil
            }
            throw error
        } catch {
            entries[key] = nil
            throw error
        }
    }

    /// FCM refused `token` (401): the next send asks for another.
    func invalidate(_ account: FCMServiceAccount, token: String) {
        let key = Key(account)
        if case .ready(token, _)? = entries[key] { entries[key] = nil }
    }
}
