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
        let digest = SHA256.hash(data: Array(bytes)).map { String(format: "%02x", $0) }.joined()
        state.withLockedValue { $0.bodyDigest = digest }
    }
}

/// Writes audit entries with group commit: a request's entry is in PostgreSQL before the
/// request is answered, and the entries of requests that arrive meanwhile go in the same
/// transaction (one lock of the chain, one commit), so the log costs a busy API one
/// commit per batch rather than per request.
final class AuditRecorder: Sendable {
    private struct Waiting {
        var entry: AuditEntry
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
    }

    private let store: APIStore
    private let state = NIOLockedValueBox(State())
    private let logger = Logger(label: "herald.api.audit")

    init(store: APIStore) { self.store = store }

    /// Returns once `entry` is committed; throws what the write threw.
    func record(_ entry: AuditEntry) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let lead = state.withLockedValue { state -> Bool in
                state.waiting.append(Waiting(entry: entry, continuation: continuation))
                guard !state.writing else { return false }
                state.writing = true
                return true
            }
            // The first waiter with no write under way writes every batch until none waits.
            if lead { Task { await self.drain() } }
        }
    }

    private func drain() async {
        while true {
            let batch = state.withLockedValue { state -> [Waiting] in
                let batch = state.waiting
                state.waiting.removeAll()
                if batch.isEmpty { state.writing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                try await store.appendAudit(batch.map(\.entry))
                for waiting in batch { waiting.continuation.resume() }
            } catch {
                logger.error("cannot write the audit log", metadata: ["error": "\(error)", "herald.entries": "\(batch.count)"])
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
