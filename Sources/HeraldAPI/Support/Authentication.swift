import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// Reads the credentials of a request and checks them against the access the route being
/// served declared (``RouteAccess/serving``):
/// - the admin API: the configured admin token, or an admin key (`Bearer hka_…`);
/// - an app: Basic `app_key:master_secret` (while the app allows it), or one of its keys,
///   as Basic `app_key:hk_…` (how JPush's clients already send credentials) or
///   `Bearer hk_…`, holding the route's scope, unexpired, unrevoked, from an allowed
///   address;
/// - a device: Basic `registration_id:device_secret`, on its own registration, where the
///   route admits the device;
/// - a person: their session's token (`hks_…`), as Basic `app_key:hks_…` on an app's
///   routes (their role on the app holding the route's scope) and as `Bearer hks_…` on
///   the admin API (an instance admin) and their own session's routes; on a destructive
///   route (``RouteAccess/Serving/confirm``) only with their password confirmed lately.
///
/// A route that declared no access refuses everything (fail closed).
struct Authentication: Sendable {
    let store: APIStore
    let adminToken: String
    /// Every credentials check that succeeds is recorded here (see ``VerifiedCredentials``).
    let verified: VerifiedCredentials
    let apps: AppCredentialCache
    let logger = Logger(label: "herald.api.auth")

    init(store: APIStore, adminToken: String, verified: VerifiedCredentials = VerifiedCredentials()) {
        self.store = store
        self.adminToken = adminToken
        self.verified = verified
        self.apps = AppCredentialCache(verified: verified)
    }

    /// Requires the admin token or an admin key (`Authorization: Bearer …`). Returns the
    /// admin key used (nil: the configured token).
    @discardableResult
    func requireAdmin(_ request: Request) async throws -> APIKeyRecord? {
        let serving = try Self.serving(admitting: { $0 == .admin })
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw HeraldError(.unauthorized, "Authorization: expected Bearer with the admin token or an admin key")
        }
        let token = String(header.dropFirst("Bearer ".count))
        if APIKeyText.id(of: token, prefix: APIKeyText.sessionPrefix) != nil {
            let signedIn = try await signedIn(token: token, header: header, serving)
            guard signedIn.person.isInstanceAdmin else {
                throw HeraldError(.forbidden, "\(signedIn.actor) is not an instance admin")
            }
            try Self.checkConfirmation(signedIn, serving)
            return nil
        }
        if SecretHash.matches(token, stored: SecretHash.digest(adminToken)) {
            serving.audit?.identify(actor: "admin_token", appID: nil)
            verified.record(header)
            return nil
        }
        guard APIKeyText.keyID(of: token)?.hasPrefix(APIKeyText.adminPrefix) == true,
            let (key, app) = try await store.keys.authenticate(secret: token), app == nil
        else {
            throw HeraldError(.unauthorized, "Authorization: wrong admin token")
        }
        serving.audit?.identify(actor: "admin_key:\(key.keyID)", appID: nil)
        try Self.check(key, scope: nil, serving)
        verified.record(header)
        try? await store.keys.touch(key.keyID, from: serving.remoteAddress?.description)
        return key
    }

    /// Requires the app's credentials with the route's scope.
    func requireApp(_ request: Request) async throws -> AppRecord {
        try await requireAppCaller(request).app
    }

    /// Requires the app's credentials with the route's scope; says which key they are
    /// (nil: the master secret).
    func requireAppCaller(_ request: Request) async throws -> AppCaller {
        let serving = try Self.serving(admitting: { $0.scope != nil })
        return try await appCaller(request, serving)
    }

    /// Requires the app's credentials with the route's scope, or the device's own
    /// `registration_id:device_secret` where the route admits the device.
    func requireAppOrDevice(_ request: Request, registrationID: String) async throws -> Principal {
        let serving = try Self.serving(admitting: { $0.scope != nil })
        let header = try basicOrBearer(request)
        if case .appOrDevice = serving.access, let credentials = BasicCredentials(authorization: header),
            Identifiers.isRegistrationID(credentials.user)
        {
            guard let principal = try await store.devices.authenticate(registrationID: credentials.user, deviceSecret: credentials.password)
            else {
                throw HeraldError(.unauthorized, "Authorization: wrong registration_id or device_secret")
            }
            verified.record(header)
            serving.audit?.device(appID: principal.appID)
            guard credentials.user == registrationID else {
                throw HeraldError(.forbidden, "a device may only act on its own registration")
            }
            return principal
        }
        let app = try await appCaller(request, serving).app
        return .app(appID: app.id, appKey: app.appKey)
    }

    /// The app a request's credentials name, with no route's checks (the rate limiter's
    /// headers); nil when they name none.
    func identifyApp(_ request: Request) async -> AppRecord? {
        guard let header = request.headers[.authorization] else { return nil }
        return try? await apps.caller(authorization: header) { try await resolve(header) }?.caller.app
    }

    /// The app's caller, checked against the route.
    private func appCaller(_ request: Request, _ serving: RouteAccess.Serving) async throws -> AppCaller {
        let header = try basicOrBearer(request)
        if let credentials = BasicCredentials(authorization: header),
            APIKeyText.id(of: credentials.password, prefix: APIKeyText.sessionPrefix) != nil
        {
            return try await personCaller(appKey: credentials.user, token: credentials.password, header: header, serving)
        }
        guard let (caller, fresh) = try await apps.caller(authorization: header, resolve: { try await resolve(header) }) else {
            throw HeraldError(.unauthorized, "Authorization: wrong app_key or master_secret")
        }
        serving.audit?.identify(actor: caller.key.map { "key:\($0.keyID)" } ?? "master_secret", appID: caller.app.id)
        if let key = caller.key {
            try Self.check(key, scope: serving.access.scope, serving)
            if fresh { try? await store.keys.touch(key.keyID, from: serving.remoteAddress?.description) }
        }
        return caller
    }

    /// Who `header` names: Basic `app_key:master_secret`, Basic `app_key:hk_…`, or
    /// `Bearer hk_…`; nil when the credentials are wrong.
    private func resolve(_ header: String) async throws -> AppCaller? {
        if header.hasPrefix("Bearer ") {
            let token = String(header.dropFirst("Bearer ".count))
            guard APIKeyText.keyID(of: token)?.hasPrefix(APIKeyText.appPrefix) == true,
                let (key, app) = try await store.keys.authenticate(secret: token), let app
            else { return nil }
            return AppCaller(app: app, key: key)
        }
        let (appKey, secret) = try Self.basicCredentials(header)
        if APIKeyText.keyID(of: secret)?.hasPrefix(APIKeyText.appPrefix) == true {
            guard let (key, app) = try await store.keys.authenticate(secret: secret), let app, app.appKey == appKey else { return nil }
            return AppCaller(app: app, key: key)
        }
        return try await store.authenticateApp(appKey: appKey, masterSecret: secret).map { AppCaller(app: $0, key: nil) }
    }

    /// Refuses a key that is revoked or expired (401), used from an address outside its
    /// ranges, or lacking the route's scope (403, the scope named).
    static func check(_ key: APIKeyRecord, scope: Scope?, _ serving: RouteAccess.Serving) throws {
        if key.revokedAt != nil { throw HeraldError(.unauthorized, "Authorization: key \(key.keyID) was revoked") }
        if let expiresAt = key.expiresAt, expiresAt <= Date() {
            throw HeraldError(.unauthorized, "Authorization: key \(key.keyID) expired")
        }
        guard key.allows(serving.remoteAddress) else {
            throw HeraldError(.forbidden, "key \(key.keyID) may not be used from \(serving.remoteAddress?.description ?? "this address")")
        }
        if let scope, !Set(key.scopes).grants(scope) {
            throw HeraldError(.forbidden, "key \(key.keyID) lacks the scope \(scope.needed)")
        }
    }

    /// The route being served, when its access admits what is asked; a route that
    /// declared none (or is called outside a route) refuses.
    static func serving(admitting admits: (RouteAccess) -> Bool) throws -> RouteAccess.Serving {
        guard let serving = RouteAccess.serving, admits(serving.access) else {
            throw HeraldError(.forbidden, "this route does not take these credentials")
        }
        return serving
    }

    private func basicOrBearer(_ request: Request) throws -> String {
        guard let header = request.headers[.authorization] else { throw Self.notBasic }
        return header
    }

    private static func basicCredentials(_ header: String) throws -> (appKey: String, masterSecret: String) {
        guard let credentials = BasicCredentials(authorization: header) else { throw notBasic }
        return (credentials.user, credentials.password)
    }

    private static let notBasic = HeraldError(.unauthorized, "Authorization: expected Basic app_key:master_secret")
}
