import Crypto
import Foundation
import HeraldCore
import HeraldStore
import Logging
import NIOConcurrencyHelpers

/// What one request contributes to its audit entry, filled in as the request goes: who
/// its credentials named (``Authentication``) and its body's digest (``JSONBody``).
final class RequestAudit: Sendable {
    struct State {
        var actor = "anonymous"
        var appID: Int64?
        var bodyDigest: String?
        /// A device acting on its own registration: not an operator's change, not audited.
        var isDevice = false
    }

    private let state = NIOLockedValueBox(State())

    /// What was gathered so far.
    var gathered: State { state.withLockedValue { $0 } }

    func identify(actor: String, appID: Int64?) {
        state.withLockedValue {
            $0.actor = actor
            $0.appID = appID
        }
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
                try await store.appendAudit(entries)
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
