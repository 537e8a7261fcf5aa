import Crypto
import Foundation
import HeraldCore
import HeraldStore
import Logging
import NIOConcurrencyHelpers

/// What one request contributes to its audit entry, filled in as the request goes: who
/// its credentials named (``Authentication``) and its body's digest (``JSONBody``). A push
/// writes the entry in its own commit (``claimForCommit()``); the route writes it otherwise.
final class RequestAudit: Sendable {
    struct State {
        var actor = "anonymous"
        var appID: Int64?
        var bodyDigest: String?
        /// A device acting on its own registration: not an operator's change, not audited.
        var isDevice = false
        /// The entry was claimed by a commit that writes it (a push's).
        var claimed = false
    }

    /// The route and request: what every entry of this request says besides the above.
    let action: String
    let target: String
    let address: String?
    let requestID: String
    private let state = NIOLockedValueBox(State())

    init(action: String, target: String, address: String?, requestID: String) {
        self.action = action
        self.target = target
        self.address = address
        self.requestID = requestID
    }

    /// What was gathered so far.
    var gathered: State { state.withLockedValue { $0 } }

    func identify(actor: String, appID: Int64?) {
        state.withLockedValue {
            $0.actor = actor
            $0.appID = appID
        }
    }

    /// The app an admin request acts on (its entry is the app's too, as an app's own
    /// request's is), the actor unchanged.
    func concerning(appID: Int64) {
        state.withLockedValue { $0.appID = appID }
    }

    func device(appID: Int64) {
        state.withLockedValue {
            $0.isDevice = true
            $0.appID = appID
        }
    }

    func body(_ bytes: some Sequence<UInt8>) {
        let digest = Hex.encode(SHA256.hash(data: Array(bytes)))
        state.withLockedValue { $0.bodyDigest = digest }
    }

    /// The entry with this outcome.
    func entry(status: Int) -> AuditEntry {
        let state = gathered
        return AuditEntry(
            appID: state.appID,
            actor: state.actor,
            action: action,
            target: target,
            status: status,
            address: address,
            requestID: requestID,
            bodyDigest: state.bodyDigest
        )
    }

    /// The request's entry (status 200) for a commit that writes it with what the request
    /// changed, once: nil when another commit of the request claimed it (a batch's other
    /// pushes) or a device acts. ``release()`` if that commit fails.
    func claimForCommit() -> AuditEntry? {
        let claimed = state.withLockedValue { state -> Bool in
            guard !state.claimed, !state.isDevice else { return false }
            state.claimed = true
            return true
        }
        return claimed ? entry(status: 200) : nil
    }

    /// The commit that claimed the entry failed: the route writes it.
    func release() {
        state.withLockedValue { $0.claimed = false }
    }
}

/// Writes audit entries with group commit (``GroupCommit``): a request's entry is in
/// PostgreSQL before the request is answered, and the entries of requests that arrive
/// while a write is in flight go in the next one (one lock of the chain, one commit).
final class AuditRecorder: Sendable {
    private let commits: GroupCommit<AuditEntry, Result<Void, any Error>>

    init(store: APIStore) {
        let logger = Logger(label: "herald.api.audit")
        commits = GroupCommit(maxBatch: 500, maxConcurrentCommits: 1) { entries in
            do {
                try await store.audit.append(entries)
                return entries.map { _ in .success(()) }
            } catch {
                logger.error("cannot write the audit log", metadata: ["error": "\(error)", "herald.entries": "\(entries.count)"])
                return entries.map { _ in .failure(error) }
            }
        }
    }

    /// Returns once `entry` is committed; throws what the write threw.
    func record(_ entry: AuditEntry) async throws {
        try await commits.submit(entry).get()
    }
}
