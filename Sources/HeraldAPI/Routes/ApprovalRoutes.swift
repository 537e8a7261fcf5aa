import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// The two-person rule (issue #30): `/v3/push/approvals`, the pushes waiting for a second
/// person, and `/v3/push/approval_rule`, the app's threshold. A push is kept here by
/// `POST /v3/push` when ``ApprovalRule`` holds it; approving sends exactly the body that
/// was composed, validated again as it is sent, under a cid of its own (approving twice
/// sends it once).
struct ApprovalRoutes {
    let store: APIStore
    let pushes: PushRoutes
    let auth: Authentication
    let body: JSONBody

    /// How long a composed push waits for its approval.
    static let lifetime: Duration = .seconds(7 * 86_400)

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/push/approvals", access: .app(.compose), use: list)
        routes.on(.get, "/v3/push/approvals/{approval_id}", access: .app(.compose), use: show)
        routes.on(.post, "/v3/push/approvals/{approval_id}/approve", access: .app(.send), use: approve)
        routes.on(.post, "/v3/push/approvals/{approval_id}/reject", access: .app(.send), use: reject)
        routes.on(.get, "/v3/push/approval_rule", access: .app(.settings), use: rule)
        routes.on(.put, "/v3/push/approval_rule", access: .app(.settings), use: setRule)
    }

    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> ApprovalList {
        let app = try await auth.requireApp(request)
        let state = request.uri.queryParameters.get("state") ?? "pending"
        guard state == "pending" || state == "all" else { throw HeraldError.invalidField("state", "pending (the default) or all") }
        let all = state == "all"
        return ApprovalList(approvals: try await store.people.approvals(appID: app.id, all: all).map(ApprovalBody.init))
    }

    @Sendable func show(_ request: Request, context: HeraldRequestContext) async throws -> ApprovalBody {
        let app = try await auth.requireApp(request)
        return ApprovalBody(try await approval(app, context))
    }

    /// Sends the composed push: only a person (keys and the master secret compose, never
    /// approve), other than its composer, whose role approves.
    @Sendable func approve(_ request: Request, context: HeraldRequestContext) async throws -> ApprovalBody {
        let caller = try await auth.requireAppCaller(request)
        let pending = try await approval(caller.app, context)
        try Self.mayDecide(pending, caller)
        if pending.state == .approved, let msgID = pending.msgID {
            throw HeraldError(.conflict, "approval \(pending.id): approved already, sent as \(msgID)")
        }
        guard let claimed = try await store.people.claimApproval(appID: caller.app.id, id: pending.id, by: caller.actor) else {
            throw HeraldError(.conflict, "approval \(pending.id): \(pending.state.rawValue), not pending")
        }
        var input: PushRequest
        do {
            input = try JSONDecoder().decode(PushRequest.self, from: Data(claimed.body))
        } catch {
            throw HeraldError(.internalError, "approval \(claimed.id): the kept push no longer decodes")
        }
        input.cid = claimed.cid
        let (request, push) = try await pushes.validated(input, app: caller.app)
        if request.audience == .all { try Authentication.requireConfirmation(caller.signedIn) }
        let sent = try await pushes.send(request, push, app: caller.app)
        return ApprovalBody(try await store.people.recordSent(appID: caller.app.id, id: claimed.id, msgID: sent.msgID) ?? claimed)
    }

    @Sendable func reject(_ request: Request, context: HeraldRequestContext) async throws -> ApprovalBody {
        let caller = try await auth.requireAppCaller(request)
        let pending = try await approval(caller.app, context)
        try Self.mayDecide(pending, caller)
        guard let rejected = try await store.people.reject(appID: caller.app.id, id: pending.id, by: caller.actor) else {
            throw HeraldError(.conflict, "approval \(pending.id): \(pending.state.rawValue), not pending")
        }
        return ApprovalBody(rejected)
    }

    @Sendable func rule(_ request: Request, context: HeraldRequestContext) async throws -> ApprovalRuleBody {
        let app = try await auth.requireApp(request)
        return ApprovalRuleBody(threshold: try await store.people.approvalThreshold(appID: app.id))
    }

    @Sendable func setRule(_ request: Request, context: HeraldRequestContext) async throws -> ApprovalRuleBody {
        let app = try await auth.requireApp(request)
        let rule = try await body.decode(ApprovalRuleBody.self, from: request)
        if let threshold = rule.threshold, threshold < 0 {
            throw HeraldError.invalidField("threshold", "0 or more devices, or null to turn the rule off")
        }
        try await store.people.setApprovalThreshold(rule.threshold, appID: app.id)
        return rule
    }

    static func mayDecide(_ approval: PushApproval, _ caller: AppCaller) throws {
        guard let signedIn = caller.signedIn else {
            throw HeraldError(.forbidden, "only a person approves or rejects a push (sign in: POST /auth/v1/sessions)")
        }
        let role = signedIn.person.role(onApp: caller.app.appKey)
        guard ApprovalRule.mayApprove(approverUserID: signedIn.person.id, role: role, composerUserID: approval.composerUserID) else {
            throw HeraldError(.forbidden, "\(signedIn.actor) composed this push: another person decides on it")
        }
    }

    private func approval(_ app: AppRecord, _ context: HeraldRequestContext) async throws -> PushApproval {
        let text = try context.parameter("approval_id")
        guard let id = Int64(text), id > 0, let approval = try await store.people.approval(appID: app.id, id: id) else {
            throw HeraldError(.approvalNotFound, "approval_id: no approval \(text) in this app")
        }
        return approval
    }
}

/// A push waiting for (or past) its approval. Its body is the `/v3/push` body as composed.
struct ApprovalBody: ResponseEncodable {
    var approvalId: String
    var state: String
    var audienceSize: Int64
    var composer: String
    var composedAt: Date
    var decider: String?
    var decidedAt: Date?
    var expiresAt: Date
    var msgId: String?
    var push: JSONValue

    init(_ approval: PushApproval) {
        approvalId = String(approval.id)
        state = approval.state.rawValue
        audienceSize = approval.audienceSize
        composer = approval.composer
        composedAt = approval.composedAt
        decider = approval.decider
        decidedAt = approval.decidedAt
        expiresAt = approval.expiresAt
        msgId = approval.msgID
        push = (try? JSONDecoder().decode(JSONValue.self, from: Data(approval.body))) ?? .null
    }

    enum CodingKeys: String, CodingKey {
        case approvalId, state, audienceSize, composer, composedAt, decider, decidedAt, expiresAt, msgId, push
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(approvalId, forKey: .approvalId)
        try container.encode(state, forKey: .state)
        try container.encode(audienceSize, forKey: .audienceSize)
        try container.encode(composer, forKey: .composer)
        try container.encode(composedAt, forKey: .composedAt)
        try container.encode(decider, forKey: .decider)
        try container.encode(decidedAt, forKey: .decidedAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(msgId, forKey: .msgId)
        try container.encode(push, forKey: .push)
    }
}

struct ApprovalList: ResponseEncodable {
    var approvals: [ApprovalBody]
}

/// `{"threshold": N | null}`: a person's push to more than N devices waits for another's
/// approval; null turns the rule off.
struct ApprovalRuleBody: Codable, ResponseEncodable {
    var threshold: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable { case threshold }

    init(threshold: Int64?) { self.threshold = threshold }

    init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        guard container.contains(.threshold) else { throw HeraldError.missingField("threshold", "is required (null turns the rule off)") }
        threshold = try container.decode(Int64?.self, forKey: .threshold)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(threshold, forKey: .threshold)
    }
}
