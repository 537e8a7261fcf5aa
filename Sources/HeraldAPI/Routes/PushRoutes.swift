import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `/v3/push`: send, validate and recall pushes.
struct PushRoutes {
    let store: APIStore
    let acceptor: PushAcceptor
    let auth: Authentication
    let body: JSONBody
    let recallWindow: Duration
    let outbound: OutboundAddressRule

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v3/push", access: .app(.compose), use: push)
        routes.on(.post, "/v3/push/validate", access: .app(.compose), use: validate)
        routes.on(.post, "/v3/push/recall", access: .app(.recall), use: recallByIdentifier)
        routes.on(.delete, "/v3/push/{msg_id}", access: .app(.recall), use: recall)
    }

    /// Accepted means durable: the message and its job are committed before the answer
    /// (group-committed with the pushes arriving meanwhile). A push the two-person rule
    /// holds (``ApprovalRule``) is kept for approval instead: 202 with its approval.
    @Sendable func push(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let caller = try await auth.requireAppCaller(request)
        let (input, push) = try await validated(request, app: caller.app)
        switch try await accept(input, push, caller) {
        case .sent(let response): return response.response(from: request, context: context)
        case .held(let pending):
            return try EditedResponse(status: .accepted, response: ApprovalBody(pending)).response(from: request, context: context)
        }
    }

    /// What became of a push: sent, or kept for a second person's approval.
    enum Outcome {
        case sent(PushResponse)
        case held(PushApproval)
    }

    /// A validated push from `caller`, as `POST /v3/push` takes it (the console's composer
    /// too): a person's push to every device asks for their password confirmed lately; a
    /// repeated cid answers the first push; the two-person rule may keep it; else it is sent.
    func accept(_ input: PushRequest, _ push: Push, _ caller: AppCaller) async throws -> Outcome {
        if input.audience == .all { try Authentication.requireConfirmation(caller.signedIn) }
        if let cid = push.cid, let earlier = try await store.acceptedPush(appID: caller.app.id, cid: cid) {
            return .sent(PushResponse(push, msgID: earlier.msgID, cid: earlier.cid))
        }
        if caller.signedIn != nil || !caller.scopes.contains(.send), let pending = try await heldForApproval(input, push, caller) {
            return .held(pending)
        }
        return .sent(try await send(input, push, app: caller.app))
    }

    /// Sends a validated push: refused when it reaches no device (unless it is stored to be
    /// checked later).
    func send(_ input: PushRequest, _ push: Push, app: AppRecord) async throws -> PushResponse {
        if !push.path.checksAudienceWhenStored, !push.deliversNothing,
            try await store.audienceSize(appID: app.id, audience: push.audience, limit: 1) == 0
        {
            throw HeraldError(.noAudienceMatch, "audience: no device of this app matches; nothing was sent")
        }
        let accepted = try await acceptor.accept(input, push: push, appID: app.id)
        return PushResponse(push, msgID: accepted.msgID, cid: accepted.cid)
    }

    /// The push kept for a second person's approval when the two-person rule holds it;
    /// nil when it is sent now.
    private func heldForApproval(_ input: PushRequest, _ push: Push, _ caller: AppCaller) async throws -> PushApproval? {
        let people = store.people
        let threshold = caller.signedIn == nil ? nil : try await people.approvalThreshold(appID: caller.app.id)
        let holdsSend = caller.scopes.contains(.send)
        let needsSize = !holdsSend || ApprovalRule.needsAudienceSize(isPerson: caller.signedIn != nil, threshold: threshold)
        let size = needsSize ? Int64(try await store.audienceSize(appID: caller.app.id, audience: push.audience)) : nil
        let decision = ApprovalRule.decide(scopes: caller.scopes, isPerson: caller.signedIn != nil, threshold: threshold, audienceSize: size)
        guard decision == .awaitApproval else { return nil }
        guard (size ?? 0) > 0 || push.deliversNothing else {
            throw HeraldError(.noAudienceMatch, "audience: no device of this app matches; nothing was kept for approval")
        }
        return try await people.submitForApproval(
            appID: caller.app.id,
            body: input.storedJSON,
            audienceSize: size ?? 0,
            composer: caller.actor,
            composerUserID: caller.signedIn?.person.id,
            lifetime: ApprovalRoutes.lifetime
        )
    }

    /// The same checks as a push, and the audience size; nothing is stored or sent.
    @Sendable func validate(_ request: Request, context: HeraldRequestContext) async throws -> PushResponse {
        let app = try await auth.requireApp(request)
        let push = try await validated(request, app: app).push
        let size = try await store.audienceSize(appID: app.id, audience: push.audience)
        guard size > 0 || push.deliversNothing else {
            throw HeraldError(.noAudienceMatch, "audience: no device of this app matches")
        }
        // No message is made: its msg_id is "0".
        return PushResponse(push, msgID: "0", cid: nil, audienceSize: size)
    }

    /// The request and its push, JPush's `override_msg_id` turned into the replace of that
    /// push's identifier (within a day, as JPush; an unknown msg_id is an invalid field, as
    /// JPush answers it). The keys Herald ignores are the first of the push's warnings.
    private func validated(_ request: Request, app: AppRecord) async throws -> (request: PushRequest, push: Push) {
        let unknownFields = UnknownFields()
        let input = try await body.decode(PushRequest.self, from: request, unknownFields: unknownFields, fast: PushRequest.fastRead)
        return try await validated(input, app: app, unknownFields: unknownFields)
    }

    /// A decoded request's push, as ``validated(_:app:)`` makes it.
    func validated(
        _ input: PushRequest,
        app: AppRecord,
        unknownFields: UnknownFields = UnknownFields()
    ) async throws -> (request: PushRequest, push: Push) {
        var input = input
        if input.notification?.ios != nil { input = try await store.resolvingCategory(input, appID: app.id) }
        var push = try input.validated().controlled(by: app)
        push.warnings = unknownFields.warnings + push.warnings
        if let callback = push.callback { try outbound.check(url: callback.url, field: "callback.url") }
        guard let msgID = push.overrideMsgID else { return (input, push) }
        guard let identifier = try await store.identifier(appID: app.id, msgID: msgID) else {
            // JPush answers an override_msg_id it doesn't find as an invalid parameter.
            throw HeraldError.invalidField("options.override_msg_id", "no message \(msgID) in this app within the last 24 hours")
        }
        var overriding = try input.overriding(identifier: identifier)
        overriding.push.warnings = unknownFields.warnings + overriding.push.warnings
        return (overriding.request, overriding.push.controlled(by: app))
    }

    @Sendable func recall(_ request: Request, context: HeraldRequestContext) async throws -> RecallResponse {
        let app = try await auth.requireApp(request)
        let msgID = try context.parameter("msg_id")
        guard Identifiers.isMsgID(msgID) else {
            throw HeraldError(.messageNotFound, "msg_id: no message \(msgID) in this app")
        }
        let recalled = try await store.recall(appID: app.id, msgIDs: [msgID], window: recallWindow.timeInterval)
        return RecallResponse(recalled: recalled)
    }

    @Sendable func recallByIdentifier(_ request: Request, context: HeraldRequestContext) async throws -> RecallResponse {
        let app = try await auth.requireApp(request)
        let input = try await body.decode(RecallRequest.self, from: request)
        let identifiers = try Push.recallIdentifiers(input.identifiers)
        let recalled = try await store.recall(appID: app.id, identifiers: identifiers, window: recallWindow.timeInterval)
        return RecallResponse(recalled: recalled)
    }
}

/// `{"sendno", "msg_id", "cid", "warnings"}` as JPush answers (`sendno` echoed, "0" when the
/// request has none; `warnings` only when there are some), and for a validation the
/// `audience_size`. Written without JSONEncoder: it answers every push.
struct PushResponse: ResponseGenerator {
    var sendno: Int64
    var msgID: String
    var cid: String?
    var warnings: [String]
    var audienceSize: Int?

    init(_ push: Push, msgID: String, cid: String?, audienceSize: Int? = nil) {
        sendno = push.sendno ?? 0
        self.msgID = msgID
        self.cid = cid
        warnings = push.warnings
        self.audienceSize = audienceSize
    }

    func response(from request: Request, context: some RequestContext) -> Response {
        var json = JSONObjectWriter(capacity: 96)
        json.field("sendno", String(sendno))
        json.field("msg_id", msgID)
        json.field("cid", cid)
        json.field("audience_size", audienceSize)
        json.field("warnings", warnings.isEmpty ? nil : warnings)
        let body = json.finish()
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(body.count)],
            body: .init(byteBuffer: ByteBuffer(bytes: body))
        )
    }
}

struct RecallRequest: Decodable {
    var identifiers: [String]

    enum CodingKeys: String, CodingKey, CaseIterable { case identifiers }

    init(from decoder: any Decoder) throws {
        identifiers = try decoder.strictContainer(keyedBy: CodingKeys.self).decode([String].self, forKey: .identifiers)
    }
}

struct RecallResponse: ResponseEncodable {
    var recalled: [String]
}

extension Push {
    /// This push, marked for the app's quiet hours and daily cap when they apply to it
    /// (``Push/isDeliveryControlled``).
    func controlled(by app: AppRecord) -> Push {
        var push = self
        push.isDeliveryControlled = app.controls.apply(toClassification: classification)
        return push
    }
}
