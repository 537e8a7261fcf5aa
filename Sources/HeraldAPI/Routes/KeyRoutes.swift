import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// API keys (issue #30), each shown once at creation and stored hashed:
/// - `/v3/keys`: the app's own keys, managed with a key holding `keys` (or the master
///   secret); a key never grants a scope its creator lacks. `POST /v3/keys/{key_id}/rotate`
///   makes its successor (same name, scopes and ranges) and leaves it working until it is
///   revoked (`DELETE`), so a rotation has an overlap. `PUT /v3/keys/master_secret`
///   switches the JPush-style `app_key:master_secret` off (or on).
/// - `/admin/v1/keys`: the admin API's keys; `/admin/v1/apps/{app_key}/keys`: an app's, as
///   the administrator sees and changes them.
struct KeyRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/keys", access: .app(.keys), use: list)
        routes.on(.post, "/v3/keys", access: .app(.keys), use: create)
        routes.on(.get, "/v3/keys/master_secret", access: .app(.keys), use: masterSecret)
        routes.on(.put, "/v3/keys/master_secret", access: .app(.keys), confirm: true, use: setMasterSecret)
        routes.on(.get, "/v3/keys/{key_id}", access: .app(.keys), use: show)
        routes.on(.post, "/v3/keys/{key_id}/rotate", access: .app(.keys), use: rotate)
        routes.on(.delete, "/v3/keys/{key_id}", access: .app(.keys), confirm: true, use: revoke)
        routes.on(.get, "/admin/v1/keys", access: .admin, use: listAdmin)
        routes.on(.post, "/admin/v1/keys", access: .admin, use: createAdmin)
        routes.on(.post, "/admin/v1/keys/{key_id}/rotate", access: .admin, use: rotateAdmin)
        routes.on(.delete, "/admin/v1/keys/{key_id}", access: .admin, confirm: true, use: revokeAdmin)
        routes.on(.get, "/admin/v1/apps/{app_key}/keys", access: .admin, use: listForApp)
        routes.on(.post, "/admin/v1/apps/{app_key}/keys", access: .admin, use: createForApp)
        routes.on(.delete, "/admin/v1/apps/{app_key}/keys/{key_id}", access: .admin, confirm: true, use: revokeForApp)
        routes.on(.put, "/admin/v1/apps/{app_key}/keys/master_secret", access: .admin, confirm: true, use: setMasterSecretForApp)
    }

    // MARK: The app's own keys

    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> KeyList {
        let caller = try await auth.requireAppCaller(request)
        return KeyList(keys: try await store.keys.list(appID: caller.app.id).map(KeyBody.init))
    }

    @Sendable func create(_ request: Request, context: HeraldRequestContext) async throws -> EditedResponse<CreatedKeyBody> {
        let caller = try await auth.requireAppCaller(request)
        let spec = try await body.decode(KeyRequest.self, from: request).validated(admin: false)
        try Self.mayGrant(spec.scopes, caller)
        let created = try await store.keys.create(appID: caller.app.id, spec)
        Self.log(context, "key created", created.key, app: caller.app)
        return EditedResponse(status: .created, response: CreatedKeyBody(created))
    }

    @Sendable func show(_ request: Request, context: HeraldRequestContext) async throws -> KeyBody {
        let caller = try await auth.requireAppCaller(request)
        return KeyBody(try await key(appID: caller.app.id, context, admin: false))
    }

    @Sendable func rotate(_ request: Request, context: HeraldRequestContext) async throws -> EditedResponse<CreatedKeyBody> {
        let caller = try await auth.requireAppCaller(request)
        let old = try await key(appID: caller.app.id, context, admin: false)
        try Self.mayGrant(old.scopes, caller)
        let created = try await rotated(old, appID: caller.app.id, request)
        Self.log(context, "key rotated", created.key, app: caller.app)
        return EditedResponse(status: .created, response: CreatedKeyBody(created))
    }

    @Sendable func revoke(_ request: Request, context: HeraldRequestContext) async throws -> KeyBody {
        let caller = try await auth.requireAppCaller(request)
        let key = try await revoked(appID: caller.app.id, context, admin: false)
        Self.log(context, "key revoked", key, app: caller.app)
        return KeyBody(key)
    }

    @Sendable func masterSecret(_ request: Request, context: HeraldRequestContext) async throws -> MasterSecretBody {
        let caller = try await auth.requireAppCaller(request)
        return MasterSecretBody(enabled: try await store.keys.masterSecretEnabled(appID: caller.app.id))
    }

    @Sendable func setMasterSecret(_ request: Request, context: HeraldRequestContext) async throws -> MasterSecretBody {
        let caller = try await auth.requireAppCaller(request)
        // The master secret holds every scope: only a holder of every scope may switch it.
        try Self.mayGrant(Scope.allCases, caller)
        return try await switchMasterSecret(of: caller.app, request, context)
    }

    // MARK: The admin API's keys

    @Sendable func listAdmin(_ request: Request, context: HeraldRequestContext) async throws -> KeyList {
        try await auth.requireAdmin(request)
        return KeyList(keys: try await store.keys.list(appID: nil).map(KeyBody.init))
    }

    @Sendable func createAdmin(_ request: Request, context: HeraldRequestContext) async throws -> EditedResponse<CreatedKeyBody> {
        try await auth.requireAdmin(request)
        let spec = try await body.decode(KeyRequest.self, from: request).validated(admin: true)
        let created = try await store.keys.create(appID: nil, spec)
        Self.log(context, "admin key created", created.key, app: nil)
        return EditedResponse(status: .created, response: CreatedKeyBody(created))
    }

    @Sendable func rotateAdmin(_ request: Request, context: HeraldRequestContext) async throws -> EditedResponse<CreatedKeyBody> {
        try await auth.requireAdmin(request)
        let old = try await key(appID: nil, context, admin: true)
        let created = try await rotated(old, appID: nil, request)
        Self.log(context, "admin key rotated", created.key, app: nil)
        return EditedResponse(status: .created, response: CreatedKeyBody(created))
    }

    @Sendable func revokeAdmin(_ request: Request, context: HeraldRequestContext) async throws -> KeyBody {
        try await auth.requireAdmin(request)
        let key = try await revoked(appID: nil, context, admin: true)
        Self.log(context, "admin key revoked", key, app: nil)
        return KeyBody(key)
    }

    // MARK: An app's keys, as the administrator

    @Sendable func listForApp(_ request: Request, context: HeraldRequestContext) async throws -> KeyList {
        try await auth.requireAdmin(request)
        let app = try await AdminRoutes.app(context, in: store)
        return KeyList(keys: try await store.keys.list(appID: app.id).map(KeyBody.init))
    }

    @Sendable func createForApp(_ request: Request, context: HeraldRequestContext) async throws -> EditedResponse<CreatedKeyBody> {
        try await auth.requireAdmin(request)
        let app = try await AdminRoutes.app(context, in: store)
        let spec = try await body.decode(KeyRequest.self, from: request).validated(admin: false)
        let created = try await store.keys.create(appID: app.id, spec)
        Self.log(context, "key created", created.key, app: app)
        return EditedResponse(status: .created, response: CreatedKeyBody(created))
    }

    @Sendable func revokeForApp(_ request: Request, context: HeraldRequestContext) async throws -> KeyBody {
        try await auth.requireAdmin(request)
        let app = try await AdminRoutes.app(context, in: store)
        let key = try await revoked(appID: app.id, context, admin: false)
        Self.log(context, "key revoked", key, app: app)
        return KeyBody(key)
    }

    @Sendable func setMasterSecretForApp(_ request: Request, context: HeraldRequestContext) async throws -> MasterSecretBody {
        try await auth.requireAdmin(request)
        let app = try await AdminRoutes.app(context, in: store)
        return try await switchMasterSecret(of: app, request, context)
    }

    // MARK: Shared

    /// Switches `app`'s master secret as the body says; switched off, it stops
    /// authenticating at once on this node.
    private func switchMasterSecret(of app: AppRecord, _ request: Request, _ context: HeraldRequestContext) async throws -> MasterSecretBody {
        let input = try await body.decode(MasterSecretBody.self, from: request)
        _ = try await store.keys.setMasterSecretEnabled(input.enabled, appID: app.id)
        if !input.enabled { auth.apps.forgetMasterSecret(appID: app.id) }
        context.logger.notice("master secret \(input.enabled ? "enabled" : "disabled")", metadata: ["herald.app_key": "\(app.appKey)"])
        return input
    }

    /// A key may grant only scopes it holds itself (the master secret holds all).
    static func mayGrant(_ scopes: [Scope], _ caller: AppCaller) throws {
        let held = caller.scopes
        if let missing = scopes.first(where: { !held.contains($0) }) {
            throw HeraldError(.forbidden, "\(caller.actor) lacks the scope \(missing.rawValue), so it cannot grant it")
        }
    }

    private func key(appID: Int64?, _ context: HeraldRequestContext, admin: Bool) async throws -> APIKeyRecord {
        let keyID = try context.parameter("key_id")
        guard APIKeyText.isKeyID(keyID, admin: admin), let key = try await store.keys.find(appID: appID, keyID: keyID) else {
            throw Self.notFound(keyID)
        }
        return key
    }

    private func revoked(appID: Int64?, _ context: HeraldRequestContext, admin: Bool) async throws -> APIKeyRecord {
        let keyID = try context.parameter("key_id")
        guard APIKeyText.isKeyID(keyID, admin: admin), let key = try await store.keys.revoke(appID: appID, keyID: keyID) else {
            throw Self.notFound(keyID)
        }
        auth.apps.forget(keyID: keyID)
        return key
    }

    /// The successor of `old`: its name, scopes and ranges, the expiry the body gives.
    private func rotated(_ old: APIKeyRecord, appID: Int64?, _ request: Request) async throws -> CreatedAPIKey {
        guard old.revokedAt == nil else { throw HeraldError(.conflict, "key \(old.keyID) is revoked: create a new one") }
        let input = try await body.decodeIfPresent(RotateKeyRequest.self, from: request)
        let expiresAt = try input?.validatedExpiry()
        let spec = APIKeySpec(name: old.name, scopes: old.scopes, allowedRanges: old.allowedRanges, expiresAt: expiresAt)
        return try await store.keys.create(appID: appID, spec, rotatedFrom: old.keyID)
    }

    static func notFound(_ keyID: String) -> HeraldError {
        HeraldError(.keyNotFound, "key_id: no key \(keyID)")
    }

    private static func log(_ context: HeraldRequestContext, _ message: Logger.Message, _ key: APIKeyRecord, app: AppRecord?) {
        context.logger.notice(
            message,
            metadata: [
                "herald.key_id": "\(key.keyID)", "herald.app_key": "\(app?.appKey ?? "-")",
                "herald.scopes": "\(key.scopes.map(\.rawValue).joined(separator: ","))",
            ]
        )
    }
}
