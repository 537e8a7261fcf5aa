import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// Apps made, set up and deleted: an instance admin creates one (its master secret shown
/// once) and deletes one with their password again; an app's admin uploads its APNs
/// credentials (checked, then tried against APNs, before they are saved) and sets its time
/// zone, rate limit, daily cap and quiet hours. The forms become the admin API's bodies and
/// are decoded and validated as the API does.
extension ConsoleRoutes {
    @Sendable func newAppPage(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard session.signedIn.person.instanceRole == .admin else { return notAdmin(session) }
        return pages.page("app-new", title: "New app", ["csrf": session.csrf], person: session)
    }

    @Sendable func createApp(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        let fields = try await FormBody.fields(request)
        guard Self.isGenuine(request, fields) else { return forbidden("This form is stale or from another site: reload the page.") }
        guard session.signedIn.person.instanceRole == .admin else { return notAdmin(session) }
        RouteAccess.serving?.audit?.identify(actor: session.signedIn.actor, appID: nil)
        let name: String
        do {
            name = try Validation.appName(fields["name"] ?? "")
        } catch {
            return pages.page(
                "app-new",
                title: "New app",
                ["csrf": session.csrf, "name": fields["name"] ?? "", "error": error.message],
                person: session,
                status: .badRequest
            )
        }
        let created = try await store.createApp(name: name)
        RouteAccess.serving?.audit?.concerning(appID: created.app.id)
        logger.info("app created from the console", metadata: ["herald.app_key": "\(created.app.appKey)"])
        // Shown once, here: only its hash is kept.
        return pages.page(
            "app-created",
            title: "App created",
            ["appKey": created.app.appKey, "appName": created.app.name, "masterSecret": created.masterSecret],
            person: session
        )
    }

    @Sendable func settingsPage(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard let app = try await administered(session, context) else { return noApp(session, context) }
        return try await settings(session, app)
    }

    /// Time zone, rate limit, daily cap and quiet hours, as `PATCH /admin/v1/apps/{app_key}`
    /// and `PUT …/time_zone` take them.
    @Sendable func saveSettings(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        let fields = try await FormBody.fields(request)
        guard Self.isGenuine(request, fields) else { return forbidden("This form is stale or from another site: reload the page.") }
        guard let app = try await administered(session, context) else { return noApp(session, context) }
        RouteAccess.serving?.audit?.identify(actor: session.signedIn.actor, appID: app.id)
        do {
            let zone = try Validation.timeZone(fields["time_zone"] ?? "", field: "time_zone").identifier
            let change = try JSONBody.decode(UpdateAppRequest.self, json: try Self.settingsBody(fields)).change
            if zone != app.timeZone { _ = try await store.setAppTimeZone(appID: app.id, zone) }
            if change != AppSettingsChange() { _ = try await store.updateApp(appKey: app.appKey, change) }
        } catch let error as HeraldError {
            return try await settings(session, app, form: fields, settingsError: error.message, status: .badRequest)
        }
        return ConsolePages.redirect(to: "/console/apps/\(app.appKey)/settings?saved=settings")
    }

    /// An FCM service account: the key file's text (which the page's script reads from the
    /// chosen file), and the Firebase project it must be for when given; checked as the API
    /// checks it (`FCMRoutes.account`), then tried at its token endpoint; saved only when
    /// both hold.
    @Sendable func saveFCM(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        let fields = try await FormBody.fields(request, maxSize: 64 * 1024)
        guard Self.isGenuine(request, fields) else { return forbidden("This form is stale or from another site: reload the page.") }
        guard let app = try await administered(session, context) else { return noApp(session, context) }
        RouteAccess.serving?.audit?.identify(actor: session.signedIn.actor, appID: app.id)
        if try await store.fcm.credentials(appKey: app.appKey) != nil, let refused = try await confirmed(session, password: fields["password"]) {
            return try await settings(session, app, form: fields, fcmError: refused, status: refused == Self.askPassword ? .forbidden : .unauthorized)
        }
        var body: [String: Any] = ["service_account": fields["service_account"] ?? ""]
        if let project = fields["project_id"]?.trimmingCharacters(in: .whitespaces), !project.isEmpty { body["project_id"] = project }
        let account: FCMServiceAccount
        do {
            account = try FCMRoutes.account(in: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        } catch let error as HeraldError {
            return try await settings(session, app, form: fields, fcmError: error.message, status: .badRequest)
        }
        if let fcmCheck, let refusal = await fcmCheck(account) {
            return try await settings(
                session,
                app,
                form: fields,
                fcmError: "Not saved: the token endpoint refused it: \(refusal).",
                status: .badRequest
            )
        }
        _ = try await store.fcm.setCredentials(account, appKey: app.appKey)
        logger.info("FCM credentials set from the console", metadata: ["herald.app_key": "\(app.appKey)"])
        return ConsolePages.redirect(to: "/console/apps/\(app.appKey)/settings?saved=fcm")
    }

    /// APNs credentials: a .p8 key (its text, which the page's script reads from the chosen
    /// file) with its key and team ids, or a certificate and its key; validated as the API
    /// does, then tried against APNs; saved only when both hold.
    @Sendable func saveAPNs(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        let fields = try await FormBody.fields(request, maxSize: 64 * 1024)
        guard Self.isGenuine(request, fields) else { return forbidden("This form is stale or from another site: reload the page.") }
        guard let app = try await administered(session, context) else { return noApp(session, context) }
        RouteAccess.serving?.audit?.identify(actor: session.signedIn.actor, appID: app.id)
        if app.apns != nil, let refused = try await confirmed(session, password: fields["password"]) {
            return try await settings(
                session,
                app,
                form: fields,
                apnsError: refused,
                status: refused == Self.askPassword ? .forbidden : .unauthorized
            )
        }
        var body: [String: Any] = [
            "type": fields["type"] ?? "token", "bundle_id": fields["bundle_id"] ?? "", "environment": fields["environment"] ?? "production",
            "private_key": fields["private_key"] ?? "",
        ]
        for (field, key) in [("key_id", "key_id"), ("team_id", "team_id"), ("certificate", "certificate")] {
            if let value = fields[field]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty { body[key] = value }
        }
        let credentials: APNsCredentials
        do {
            credentials = try JSONBody.decode(
                SetAPNsCredentialsRequest.self,
                json: try JSONSerialization.data(withJSONObject: body)
            ).validated()
        } catch let error as HeraldError {
            return try await settings(session, app, form: fields, apnsError: error.message, status: .badRequest)
        }
        if let apnsCheck, let refusal = await apnsCheck(credentials) {
            return try await settings(session, app, form: fields, apnsError: "Not saved: \(refusal).", status: .badRequest)
        }
        _ = try await store.apns.setAPNsCredentials(credentials, appKey: app.appKey)
        logger.info("APNs credentials set from the console", metadata: ["herald.app_key": "\(app.appKey)"])
        return ConsolePages.redirect(to: "/console/apps/\(app.appKey)/settings?saved=apns")
    }

    /// Deletes the app and everything it holds: instance admins, with their password again.
    @Sendable func deleteApp(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        let fields = try await FormBody.fields(request)
        guard Self.isGenuine(request, fields) else { return forbidden("This form is stale or from another site: reload the page.") }
        guard session.signedIn.person.instanceRole == .admin, let app = try await administered(session, context) else {
            return notAdmin(session)
        }
        RouteAccess.serving?.audit?.identify(actor: session.signedIn.actor, appID: app.id)
        if let refused = try await confirmed(session, password: fields["password"]) {
            return try await settings(session, app, deleteError: refused, status: refused == Self.askPassword ? .forbidden : .unauthorized)
        }
        guard fields["confirm_name"] == app.name else {
            return try await settings(session, app, deleteError: "Type the app's name exactly to delete it.", status: .badRequest)
        }
        _ = try await store.deleteApp(appKey: app.appKey)
        logger.warning(
            "app deleted from the console",
            metadata: ["herald.app_key": "\(app.appKey)", "herald.user": "\(session.signedIn.person.email)"]
        )
        return ConsolePages.redirect(to: "/console")
    }

    static let askPassword = "Enter your password again: this can't be undone."

    /// Nil when the person's password is given and right (their session is confirmed anew),
    /// else what to tell them.
    private func confirmed(_ session: ConsoleSession, password: String?) async throws -> String? {
        guard let password, !password.isEmpty else { return Self.askPassword }
        do {
            _ = try await auth.person(email: session.signedIn.person.email, password: password)
        } catch let error as HeraldError where error.code == .unauthorized {
            return "Wrong password."
        }
        _ = try await store.people.confirmSession(session.signedIn.session.sessionID)
        return nil
    }

    /// The app, when the person is its admin (or the instance's).
    private func administered(_ session: ConsoleSession, _ context: HeraldRequestContext) async throws -> AppRecord? {
        let appKey = try context.parameter("app_key")
        guard session.signedIn.person.role(onApp: appKey) == .admin else { return nil }
        return try await store.app(appKey: appKey)
    }

    private func notAdmin(_ session: ConsoleSession) -> Response {
        pages.page(
            "problem",
            title: "Admins only",
            ["message": "Only the instance's admins make and delete apps."],
            person: session,
            status: .forbidden
        )
    }

    private func settings(
        _ session: ConsoleSession,
        _ app: AppRecord,
        form: [String: String]? = nil,
        settingsError: String? = nil,
        apnsError: String? = nil,
        fcmError: String? = nil,
        deleteError: String? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let fcm = try await store.fcm.credentials(appKey: app.appKey)
        let quiet = app.controls.quietHours
        func clock(_ seconds: Int) -> String { String(format: "%02d:%02d", seconds / 3600, seconds / 60 % 60) }
        let current: [String: String] = [
            "time_zone": app.timeZone, "rate_limit_per_minute": app.rateLimitPerMinute.map(String.init) ?? "",
            "daily_cap": app.controls.dailyCap.map(String.init) ?? "", "quiet_start": quiet.map { clock($0.start) } ?? "",
            "quiet_end": quiet.map { clock($0.end) } ?? "", "quiet_action": quiet?.action.rawValue ?? "hold",
            "type": "token", "environment": app.apns?.environment.rawValue ?? "production", "bundle_id": app.apns?.bundleID ?? "",
            "key_id": app.apns?.keyID ?? "", "team_id": app.apns?.teamID ?? "",
        ]
        // What was typed is shown again, but never a key or a password.
        var shown = current
        for (key, value) in form ?? [:] where !["private_key", "certificate", "password", "_csrf", "service_account"].contains(key) {
            shown[key] = value
        }
        if shown["project_id"] == nil { shown["project_id"] = fcm?.summary.projectID ?? "" }
        let apnsState =
            app.apnsProblem.map { "broken: \($0)" }
            ?? app.apns.map { "ok: \($0.type == .token ? "token key \($0.keyID ?? "")" : "certificate"), \($0.bundleID), \($0.environment.rawValue)" }
            ?? "not set"
        var values: [String: Any] = [
            "appKey": app.appKey, "appName": app.name, "csrf": session.csrf, "form": shown, "apnsState": apnsState,
            "apnsBroken": app.apnsProblem != nil, "replacing": app.apns != nil,
            "mayDelete": session.signedIn.person.instanceRole == .admin,
            "quietHold": shown["quiet_action"] != "drop", "production": shown["environment"] != "sandbox",
            "certificate": shown["type"] == "certificate",
            "fcmState": fcm.map { state in
                state.brokenReason.map { "broken: \($0)" } ?? "ok: \(state.summary.clientEmail), project \(state.summary.projectID)"
            } ?? "not set",
            "fcmBroken": fcm?.brokenReason != nil, "replacingFCM": fcm != nil,
        ]
        if let fcmError { values["fcmError"] = fcmError }
        if let settingsError { values["settingsError"] = settingsError }
        if let apnsError { values["apnsError"] = apnsError }
        if let deleteError { values["deleteError"] = deleteError }
        return pages.page("settings", title: "\(app.name) settings", values, person: session, status: status)
    }

    /// The settings form as `PATCH /admin/v1/apps/{app_key}`'s body: an empty field is
    /// "none" (the node's default rate limit, no cap, no quiet hours).
    static func settingsBody(_ fields: [String: String]) throws -> Data {
        func number(_ name: String) throws -> Any {
            let text = (fields[name] ?? "").trimmingCharacters(in: .whitespaces)
            if text.isEmpty { return NSNull() }
            guard let value = Int(text) else { throw HeraldError.invalidField(name, "a whole number, or empty for none") }
            return value
        }
        var body: [String: Any] = ["rate_limit_per_minute": try number("rate_limit_per_minute"), "daily_cap": try number("daily_cap")]
        let start = (fields["quiet_start"] ?? "").trimmingCharacters(in: .whitespaces)
        let end = (fields["quiet_end"] ?? "").trimmingCharacters(in: .whitespaces)
        body["quiet_hours"] =
            start.isEmpty && end.isEmpty ? NSNull() : ["start": start, "end": end, "action": fields["quiet_action"] ?? "hold"] as [String: Any]
        return try JSONSerialization.data(withJSONObject: body)
    }
}
