import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// The web console (issue #31), served by every node under `/console`: server-rendered
/// pages (``ConsolePages``), a session cookie (``ConsoleSession``), CSRF tokens on every
/// form, and the same roles, throttle and audit log as the API.
struct ConsoleRoutes {
    let store: APIStore
    let auth: Authentication
    let pages: ConsolePages
    /// The API's push acceptance, which the composer sends through.
    let pushes: PushRoutes
    /// The API's schedule bodies, which the schedule editor's are.
    let schedules: ScheduleRoutes
    let throttle: AuthThrottleMiddleware<HeraldRequestContext>
    let lifetime: Duration
    /// Where APNs traffic goes (the local sandbox or Apple), for a device's diagnosis.
    let apnsDestination: APNsDestination
    /// APNs credentials tried before they are saved (``APIConfiguration/apnsCheck``).
    let apnsCheck: (@Sendable (APNsCredentials) async -> String?)?
    /// FCM service accounts tried before they are saved (``APIConfiguration/fcmCheck``).
    let fcmCheck: (@Sendable (FCMServiceAccount) async -> String?)?
    /// The OpenID Connect provider's label, when one is configured.
    let oidcName: String?
    let logger = Logger(label: "herald.console")

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console", access: .console, use: home)
        routes.on(.get, "/console/sign-in", access: .open, use: signInPage)
        routes.on(.post, "/console/sign-in", access: .signIn, use: signIn)
        routes.on(.post, "/console/sign-out", access: .console, use: signOut)
        routes.on(.get, "/console/dashboard", access: .console, use: dashboard)
        routes.on(.get, "/console/apps/new", access: .console, use: newAppPage)
        routes.on(.post, "/console/apps", access: .console, use: createApp)
        routes.on(.get, "/console/apps/{app_key}", access: .console, use: app)
        routes.on(.get, "/console/apps/{app_key}/settings", access: .console, use: settingsPage)
        routes.on(.post, "/console/apps/{app_key}/settings", access: .console, use: saveSettings)
        routes.on(.post, "/console/apps/{app_key}/apns", access: .console, use: saveAPNs)
        routes.on(.post, "/console/apps/{app_key}/fcm", access: .console, use: saveFCM)
        routes.on(.post, "/console/apps/{app_key}/delete", access: .console, use: deleteApp)
        routes.on(.get, "/console/apps/{app_key}/devices", access: .console, use: devices)
        routes.on(.get, "/console/apps/{app_key}/devices/{registration_id}", access: .console, use: device)
        routes.on(.post, "/console/apps/{app_key}/devices/{registration_id}/tags", access: .console, use: changeTags)
        routes.on(.post, "/console/apps/{app_key}/devices/{registration_id}/test", access: .console, use: markTestDevice)
        routes.on(.get, "/console/apps/{app_key}/compose", access: .console, use: composePage)
        routes.on(.post, "/console/apps/{app_key}/compose", access: .console, use: composeSubmit)
        routes.on(.post, "/console/apps/{app_key}/compose/preview", access: .console, use: composePreview)
        routes.on(.get, "/console/apps/{app_key}/messages", access: .console, use: messages)
        routes.on(.get, "/console/apps/{app_key}/messages/{msg_id}", access: .console, use: message)
        routes.on(.get, "/console/apps/{app_key}/messages/{msg_id}/funnel", access: .console, use: funnelStream)
        routes.on(.post, "/console/apps/{app_key}/messages/{msg_id}/recall", access: .console, use: recallMessage)
        routes.on(.get, "/console/apps/{app_key}/schedules", access: .console, use: schedulesPage)
        routes.on(.get, "/console/apps/{app_key}/schedules/{schedule_id}", access: .console, use: editSchedulePage)
        routes.on(.post, "/console/apps/{app_key}/schedules/{schedule_id}", access: .console, use: saveSchedule)
        routes.on(.post, "/console/apps/{app_key}/schedules/{schedule_id}/pause", access: .console, use: pauseSchedule)
        routes.on(.get, "/console/assets/{file}", access: .open, use: asset)
    }

    static let signInPath = "/console/sign-in"

    // MARK: Signing in and out

    @Sendable func signInPage(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        pages.page("sign-in", title: "Sign in", ["oidc": oidcName as Any])
    }

    /// The form's email and password: a session and its cookie, or the form again with
    /// why not (a wrong password and an unknown email say the same; failures are throttled
    /// as the API's credentials are).
    @Sendable func signIn(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard ConsoleSession.isSameOrigin(request) else { return forbidden("This form was sent from another site.") }
        let fields = try await FormBody.fields(request)
        let email = (fields["email"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let password = fields["password"] ?? ""
        RouteAccess.serving?.audit?.identify(actor: "user:\(email.prefix(254))", appID: nil)
        let remote = RouteAccess.serving?.remoteAddress?.description
        let address = remote ?? "unknown"
        if let wait = throttle.admitSignIn(key: email, address: address) {
            return signInAgain(email, "Too many failed sign-ins: try again in \(Self.seconds(wait)) s.", status: .tooManyRequests)
        }
        let person: Person
        do {
            person = try await auth.person(email: email, password: password)
        } catch let error as HeraldError where error.code == .unauthorized {
            if let wait = throttle.signInFailed(key: email, address: address, credentials: "\(email):\(password)".hashValue) {
                return signInAgain(email, "Too many failed sign-ins: try again in \(Self.seconds(wait)) s.", status: .tooManyRequests)
            }
            return signInAgain(email, "Wrong email or password.", status: .unauthorized)
        }
        let opened = try await store.people.openSession(userID: person.id, method: "console", lifetime: lifetime, address: remote)
        logger.info("signed in to the console", metadata: ["herald.user": "\(person.email)"])
        return ConsolePages.redirect(
            to: "/console",
            cookie: ConsoleSession.cookie(opened.token, lifetime: lifetime, secure: ConsoleSession.isSecure(request))
        )
    }

    @Sendable func signOut(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard Self.isGenuine(request, try await FormBody.fields(request)) else {
            return forbidden("This form is stale or from another site: reload the page.")
        }
        _ = try await store.people.revokeSession(session.signedIn.session.sessionID)
        return ConsolePages.redirect(
            to: Self.signInPath,
            cookie: ConsoleSession.cookie(nil, lifetime: lifetime, secure: ConsoleSession.isSecure(request))
        )
    }

    // MARK: Pages

    /// The apps the person has a role on.
    @Sendable func home(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        let person = session.signedIn.person
        let apps = try await store.listApps().compactMap { app -> [String: Any]? in
            guard let role = person.role(onApp: app.appKey) else { return nil }
            return ["name": app.name, "appKey": app.appKey, "role": role.rawValue]
        }
        return pages.page(
            "apps",
            title: "Apps",
            [
                "apps": apps, "hasApps": !apps.isEmpty, "instanceAdmin": person.instanceRole == .admin,
                "instanceMember": person.instanceRole != nil,
            ],
            person: session
        )
    }

    /// An app's overview: what it is, its devices, its latest messages. Not found alike for
    /// an app that doesn't exist and one the person has no role on.
    @Sendable func app(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        let appKey = try context.parameter("app_key")
        guard let role = session.signedIn.person.role(onApp: appKey), let app = try await store.app(appKey: appKey) else {
            return pages.page("problem", title: "No such app", ["message": "No app \(appKey) that you can see."], person: session, status: .notFound)
        }
        let summary = try await store.console.summary(appID: app.id)
        let formatter = ISO8601DateFormatter()
        let messages = summary.messages.map { message -> [String: Any] in
            ["msgID": message.msgID, "sentAt": formatter.string(from: message.sentAt), "alert": message.alert ?? "—"]
        }
        let apns = app.apnsProblem.map { "broken: \($0)" } ?? (app.apns == nil ? "not set" : "ok")
        return pages.page(
            "app",
            title: app.name,
            [
                "app": ["name": app.name, "appKey": app.appKey, "timeZone": app.timeZone], "role": role.rawValue,
                "devices": summary.devices, "apns": apns, "messages": messages, "hasMessages": !messages.isEmpty,
                "mayCompose": role.scopes.grants(.compose), "isAdmin": role == .admin,
                "messageCount": messages.count,
            ],
            person: session
        )
    }

    @Sendable func asset(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let response = pages.asset(try context.parameter("file"), acceptEncoding: request.headers[.acceptEncoding]) else {
            throw HeraldError(.routeNotFound, "no console asset with this name")
        }
        return response
    }

    // MARK: Helpers

    /// A form's POST (its `fields`): from this site, with the session's CSRF token.
    static func isGenuine(_ request: Request, _ fields: [String: String]) -> Bool {
        guard ConsoleSession.isSameOrigin(request), let token = ConsoleSession.token(in: request) else { return false }
        return ConsoleSession.csrfMatches(fields["_csrf"], token: token)
    }

    private func signInAgain(_ email: String, _ error: String, status: HTTPResponse.Status) -> Response {
        pages.page("sign-in", title: "Sign in", ["email": email, "error": error, "oidc": oidcName as Any], status: status)
    }

    /// The app of the path and the person's role on it, when that role grants `scope`.
    func member(_ session: ConsoleSession, _ context: HeraldRequestContext, needs scope: Scope) async throws -> (AppRecord, Role)? {
        let appKey = try context.parameter("app_key")
        guard let role = session.signedIn.person.role(onApp: appKey), role.scopes.grants(scope),
            let app = try await store.app(appKey: appKey)
        else { return nil }
        return (app, role)
    }

    /// Not found alike for an app that doesn't exist and one the person may not see.
    func noApp(_ session: ConsoleSession, _ context: HeraldRequestContext) -> Response {
        let appKey = (try? context.parameter("app_key")) ?? ""
        return pages.page("problem", title: "No such app", ["message": "No app \(appKey) that you can see."], person: session, status: .notFound)
    }

    func forbidden(_ message: String) -> Response {
        pages.page("problem", title: "Refused", ["message": message], status: .forbidden)
    }

    private static func seconds(_ duration: Duration) -> Int {
        max(1, Int(duration.components.seconds) + (duration.components.attoseconds > 0 ? 1 : 0))
    }
}
