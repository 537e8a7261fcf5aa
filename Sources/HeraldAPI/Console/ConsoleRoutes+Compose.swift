import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// The composer: a form that makes a `/v3/push` body, shown exactly (with the curl line that
/// sends the same) and previewed with the audience's size before anything is sent; sending
/// takes the confirmation of that size and goes through the API's own acceptance
/// (``PushRoutes/accept(_:_:_:)``: the two-person rule, the password before a push to every
/// device, the audit entry in the push's commit).
extension ConsoleRoutes {
    static let audienceKinds: [(value: String, label: String)] = [
        ("all", "Every device"), ("registration_id", "These registration ids"), ("alias", "These aliases"),
        ("tag", "Any of these tags"), ("tag_and", "All of these tags"), ("test", "Test devices only"),
    ]
    static let platforms: [(value: String, label: String)] = [("all", "All platforms"), ("ios", "iOS"), ("android", "Android")]

    @Sendable func composePage(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard let (app, _) = try await composer(session, context) else { return refusedComposer(session) }
        var form = ["audience_kind": "all", "platform": "all"]
        // From a message's "Replace…": the identifier the new push replaces.
        if let replace = request.uri.queryParameters.get("replace"), !replace.isEmpty { form["replace"] = String(replace.prefix(64)) }
        return compose(session, app, form: form)
    }

    @Sendable func composeSubmit(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard let (app, caller) = try await composer(session, context) else { return refusedComposer(session) }
        let form = try await FormBody.fields(request)
        guard Self.isGenuine(request, form), let token = ConsoleSession.token(in: request) else {
            return pages.page(
                "problem",
                title: "Refused",
                ["message": "This form is stale or from another site: reload the page."],
                status: .forbidden
            )
        }
        let draft: Draft
        do {
            draft = try await self.draft(form, app: app)
        } catch let error as HeraldError {
            return compose(session, app, form: form, error: error.message, status: .badRequest)
        }
        let (input, push, size) = (draft.input, draft.push, draft.size)
        let held = ApprovalRule.decide(
            scopes: caller.scopes,
            isPerson: true,
            threshold: try await store.people.approvalThreshold(appID: app.id),
            audienceSize: Int64(size)
        )
        var preview = draft.context(appKey: app.appKey)
        preview["held"] = held == .awaitApproval
        guard form["action"] == "send" else { return compose(session, app, form: form, preview: preview) }
        guard form["confirmed_size"] == String(size) else {
            return compose(session, app, form: form, preview: preview, notice: "The audience is now \(size) devices: look again, then send.")
        }
        do {
            if input.audience == .all, let password = form["password"], !password.isEmpty {
                _ = try await auth.person(email: session.signedIn.person.email, password: password)
                _ = try await store.people.confirmSession(session.signedIn.session.sessionID)
            }
            var confirmedCaller = caller
            if let refreshed = try await store.people.authenticateSession(token: token) {
                confirmedCaller.signedIn = SignedIn(person: refreshed.person, session: refreshed.session)
            }
            switch try await pushes.accept(input, push, confirmedCaller) {
            case .sent(let response):
                return sent(session, app, title: "Sent", "Accepted as message \(response.msgID), for \(size) devices.", msgID: response.msgID)
            case .held(let approval):
                return sent(session, app, title: "Waiting for approval", "Kept as approval \(approval.id): another person approves or rejects it.")
            }
        } catch let error as HeraldError {
            let message = error.code == .confirmationRequired ? "A push to every device needs your password: enter it below." : error.message
            return compose(
                session,
                app,
                form: form,
                preview: preview,
                error: message,
                status: error.code == .unauthorized ? .unauthorized : .badRequest
            )
        }
    }

    /// The live preview as the composer's script asks for it while the form is filled in:
    /// the audience's size, the body, the APNs payload and its size, or why the form
    /// doesn't make a push yet (JSON).
    @Sendable func composePreview(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { throw HeraldError(.unauthorized, "sign in to the console") }
        guard let (app, _) = try await composer(session, context) else { throw HeraldError(.forbidden, "composing needs the author role") }
        let form = try await FormBody.fields(request)
        guard Self.isGenuine(request, form) else { throw HeraldError(.forbidden, "this form is stale or from another site") }
        var answer: [String: Any]
        do {
            answer = try await draft(form, app: app).context(appKey: app.appKey)
        } catch let error as HeraldError {
            answer = ["error": error.message]
        }
        let data = try JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys])
        var headers = ConsolePages.securityHeaders
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// What a form makes: the body, the push as the API validates it, and its audience now.
    struct Draft {
        var body: String
        var input: PushRequest
        var push: Push
        var size: Int

        /// APNs' limit for a notification's payload.
        static let apnsLimit = 4096

        /// The preview's values: the body, its curl line, the audience, the APNs payload
        /// (the one an iPhone would get, its msg_id aside) and its size against the limit.
        func context(appKey: String) -> [String: Any] {
            var values: [String: Any] = ["audienceSize": size, "body": body, "curl": ConsoleRoutes.curl(body, appKey: appKey)]
            if push.notification != nil {
                let payload = PushRendering.apnsPayload(push, msgID: "0")
                values["apnsPayload"] = ConsoleRoutes.pretty(String(decoding: payload, as: UTF8.self))
                values["apnsBytes"] = payload.count
                values["apnsLimit"] = Self.apnsLimit
                values["apnsOver"] = payload.count > Self.apnsLimit
            }
            return values
        }
    }

    func draft(_ form: [String: String], app: AppRecord) async throws -> Draft {
        let tests = form["audience_kind"] == "test" ? try await store.console.testDevices(appID: app.id) : []
        let body = try Self.body(form, testDevices: tests)
        let input = try JSONBody.decode(PushRequest.self, json: Data(body.utf8))
        var (_, push) = try await pushes.validated(input, app: app)
        push.source = "console"
        let size = try await store.audienceSize(appID: app.id, audience: push.audience)
        return Draft(body: body, input: input, push: push, size: size)
    }

    /// The app and the person as its caller, when their role may compose.
    private func composer(_ session: ConsoleSession, _ context: HeraldRequestContext) async throws -> (AppRecord, AppCaller)? {
        let appKey = try context.parameter("app_key")
        guard let role = session.signedIn.person.role(onApp: appKey), role.scopes.grants(.compose),
            let app = try await store.app(appKey: appKey)
        else { return nil }
        RouteAccess.serving?.audit?.identify(actor: session.signedIn.actor, appID: app.id)
        return (app, AppCaller(app: app, key: nil, signedIn: session.signedIn))
    }

    private func refusedComposer(_ session: ConsoleSession) -> Response {
        pages.page(
            "problem",
            title: "Not yours to compose",
            ["message": "Composing needs the author, operator or admin role on this app."],
            person: session,
            status: .forbidden
        )
    }

    private func compose(
        _ session: ConsoleSession,
        _ app: AppRecord,
        form: [String: String],
        preview: [String: Any]? = nil,
        error: String? = nil,
        notice: String? = nil,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        let kind = form["audience_kind"] ?? "all"
        let platform = form["platform"] ?? "all"
        var values: [String: Any] = [
            "appKey": app.appKey, "appName": app.name, "csrf": session.csrf, "form": form,
            "needsPassword": kind == "all" || !(form["raw_body"] ?? "").isEmpty, "system": form["classification"] == "1",
            "hasRawBody": !(form["raw_body"] ?? "").isEmpty,
            "kinds": Self.audienceKinds.map { ["value": $0.value, "label": $0.label, "selected": $0.value == kind] },
            "platforms": Self.platforms.map { ["value": $0.value, "label": $0.label, "selected": $0.value == platform] },
        ]
        if let preview { values["preview"] = preview }
        if let error { values["error"] = error }
        if let notice { values["notice"] = notice }
        return pages.page("compose", title: "Compose", values, person: session, status: status)
    }

    private func sent(_ session: ConsoleSession, _ app: AppRecord, title: String, _ message: String, msgID: String? = nil) -> Response {
        pages.page("sent", title: title, ["appKey": app.appKey, "appName": app.name, "message": message, "msgID": msgID as Any], person: session)
    }

    /// The `/v3/push` body the form describes (keys sorted, so the same form makes the same
    /// text). Bad input is said as the API says it.
    static func body(_ form: [String: String], testDevices: [String] = []) throws -> String {
        // The body written by hand (every field the API takes): sent as written, once it
        // parses; the fields above are then not read.
        if let raw = form["raw_body"]?.trimmingCharacters(in: .whitespacesAndNewlines), !raw.isEmpty {
            guard let object = try? JSONSerialization.jsonObject(with: Data(raw.utf8)), object is [String: Any] else {
                throw HeraldError(.invalidJSON, "body: not a JSON object")
            }
            return raw
        }
        func list(_ text: String?) -> [String] {
            (text ?? "").split(whereSeparator: { $0 == "," || $0 == "\n" }).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        var object: [String: Any] = [:]
        switch form["platform"] ?? "all" {
        case "all": object["platform"] = "all"
        case let one: object["platform"] = [one]
        }
        let kind = form["audience_kind"] ?? "all"
        let values = list(form["audience_values"])
        let excluded = list(form["tag_not"])
        if kind == "all", excluded.isEmpty {
            object["audience"] = "all"
        } else if kind == "test" {
            // The test devices, named: what is sent is what the body says.
            guard !testDevices.isEmpty else {
                throw HeraldError.missingField("audience", "the app has no test device: mark one on its device page")
            }
            object["audience"] = ["registration_id": testDevices]
        } else {
            var audience: [String: Any] = [:]
            if kind != "all" {
                guard Self.audienceKinds.contains(where: { $0.value == kind }) else { throw HeraldError.invalidField("audience_kind", "unknown") }
                guard !values.isEmpty else {
                    throw HeraldError.missingField("audience", "name at least one \(kind.replacingOccurrences(of: "_", with: " "))")
                }
                audience[kind] = values
            }
            if !excluded.isEmpty { audience["tag_not"] = excluded }
            object["audience"] = audience
        }
        let alert = form["alert"] ?? ""
        var notification: [String: Any] = ["alert": alert]
        var ios: [String: Any] = [:]
        if let title = form["title"], !title.isEmpty {
            ios["alert"] = ["title": title, "body": alert]
            notification["android"] = ["alert": alert, "title": title]
        }
        if let category = form["category"], !category.isEmpty {
            ios["category"] = category
            if ios["alert"] == nil { ios["alert"] = alert }
        }
        if !ios.isEmpty { notification["ios"] = ios }
        object["notification"] = notification
        if let content = form["message_content"], !content.isEmpty {
            var message: [String: Any] = ["msg_content": content]
            if let title = form["message_title"], !title.isEmpty { message["title"] = title }
            object["message"] = message
        }
        if let sms = form["sms_content"], !sms.isEmpty {
            object["sms_message"] = ["content": sms, "delay_time": try Self.number(form, "sms_delay", field: "sms_message.delay_time") ?? 0]
        }
        var options: [String: Any] = [:]
        if let seconds = try Self.number(form, "time_to_live", field: "options.time_to_live") { options["time_to_live"] = seconds }
        if let identifier = form["identifier"], !identifier.isEmpty { options["identifier"] = identifier }
        if let replace = form["replace"], !replace.isEmpty { options["replace"] = replace }
        if let minutes = try Self.number(form, "spread_minutes", field: "options.big_push_duration") { options["big_push_duration"] = minutes }
        if form["classification"] == "1" { options["classification"] = 1 }
        if !options.isEmpty { object["options"] = options }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted])
        return String(decoding: data, as: UTF8.self)
    }

    /// A form's whole number, nil when left empty; else refused as the field it becomes.
    static func number(_ form: [String: String], _ name: String, field: String) throws -> Int? {
        let text = (form[name] ?? "").trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return nil }
        guard let value = Int(text) else { throw HeraldError.invalidField(field, "a whole number") }
        return value
    }

    /// The curl line that sends `body` with an API key of the app's.
    static func curl(_ body: String, appKey: String) -> String {
        let quoted = body.replacingOccurrences(of: "'", with: #"'\''"#)
        return "curl -X POST \"$HERALD_URL/v3/push\" -u \"\(appKey):$HERALD_API_KEY\" \\\n  -H 'Content-Type: application/json' \\\n  -d '\(quoted)'"
    }
}
