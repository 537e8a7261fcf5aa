import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/v3/push/batch/{regid,alias}/single`: up to 1,000 different pushes in one request, each
/// to one registration id or alias, under its own cid (JPush's batch single push).
///
/// Each entry is a push of its own: a bad entry fails alone, with the error `POST /v3/push`
/// would give it, and the others are accepted. The pushes are accepted through the group
/// commit together, so a full batch costs a few commits, not a thousand. A cid the app used
/// in the last 24 hours answers with that push's `msg_id` and sends nothing, as it does in
/// `POST /v3/push`.
struct BatchPushRoutes {
    let store: APIStore
    let acceptor: PushAcceptor
    let auth: Authentication
    let body: JSONBody
    let outbound: OutboundAddressRule

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v3/push/batch/regid/single", access: .app(.send)) { request, context in
            try await batch(request, context: context, target: .registrationID)
        }
        routes.on(.post, "/v3/push/batch/alias/single", access: .app(.send)) { request, context in
            try await batch(request, context: context, target: .alias)
        }
    }

    func batch(
        _ request: Request,
        context: HeraldRequestContext,
        target: BatchTarget
    ) async throws -> VerbatimKeysResponse<[String: BatchPushResult]> {
        let app = try await auth.requireApp(request)
        let input = try await body.decode(BatchPushRequest.self, from: request)
        var results: [String: BatchPushResult] = [:]
        var entries: [BatchPushEntry] = []
        for (cid, body) in try input.entries() {
            do {
                let entry = try BatchPushEntry(cid: cid, body: body, target: target)
                if let callback = entry.push.callback { try outbound.check(url: callback.url, field: "callback.url") }
                entries.append(entry)
            } catch {
                results[cid] = .failed(Self.heraldError(error, context: context))
            }
        }
        entries = try await store.resolvingCategories(entries, appID: app.id) { cid, error in
            results[cid] = .failed(Self.heraldError(error, context: context))
        }
        let earlier = try await store.prepareCIDs(appID: app.id, cids: entries.map(\.cid))
        entries.removeAll { entry in
            guard let msgID = earlier[entry.cid] else { return false }
            results[entry.cid] = .accepted(msgID)
            return true
        }
        let known = try await knownTargets(entries, appID: app.id, kind: target)
        entries.removeAll { entry in
            guard !known.contains(entry.target) else { return false }
            let named = target == .registrationID ? "registration id" : "alias"
            results[entry.cid] = .failed(HeraldError(.noAudienceMatch, "target: no device of this app has the \(named) \(entry.target)"))
            return true
        }
        let outcomes = await acceptor.accept(batch: entries.map { ($0.request, $0.push.controlled(by: app), $0.cid) }, appID: app.id)
        for (entry, outcome) in zip(entries, outcomes) {
            switch outcome {
            case .success(let accepted): results[entry.cid] = .accepted(accepted.msgID, warnings: entry.push.warnings)
            case .failure(let error): results[entry.cid] = .failed(Self.heraldError(error, context: context))
            }
        }
        return VerbatimKeysResponse(results)
    }

    private func knownTargets(_ entries: [BatchPushEntry], appID: Int64, kind: BatchTarget) async throws -> Set<String> {
        let targets = Array(Set(entries.map(\.target)))
        switch kind {
        case .registrationID: return try await store.knownRegistrationIDs(appID: appID, targets)
        case .alias: return try await store.knownAliases(appID: appID, targets)
        }
    }

    /// What an entry's failure tells its caller: a ``HeraldError`` as it is; a database that
    /// is down as `unavailable` (retry the entry: its cid keeps a retry from sending twice);
    /// anything else, logged, as an internal error.
    static func heraldError(_ error: any Error, context: HeraldRequestContext) -> HeraldError {
        if let error = error as? HeraldError { return error }
        if DatabaseFailure.isUnavailability(error) { return HeraldError(.unavailable, "the database is unavailable; retry later") }
        context.logger.error("batch push entry failed", metadata: ["error": "\(String(reflecting: error))"])
        return HeraldError(.internalError, "internal error (request id \(context.id))")
    }
}

/// One entry's answer: `{"msg_id": "..."}` or `{"error": {"code": N, "message": "..."}}`.
enum BatchPushResult: Encodable {
    /// The msg_id, and the warnings of the entry's push (as `POST /v3/push` answers them).
    case accepted(String, warnings: [String] = [])
    case failed(HeraldError)

    enum CodingKeys: String, CodingKey {
        case msgID = "msg_id"
        case warnings
        case error
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .accepted(let msgID, let warnings):
            try container.encode(msgID, forKey: .msgID)
            if !warnings.isEmpty { try container.encode(warnings, forKey: .warnings) }
        case .failed(let error): try container.encode(ErrorBody.Detail(code: error.code.rawValue, message: error.message), forKey: .error)
        }
    }
}
