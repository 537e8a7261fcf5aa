import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/admin/v1/apps/{app_key}/fcm`: an app's Firebase service account, behind the admin token.
///
/// `PUT` takes the key file Firebase's console downloads, as it is (`curl -T
/// service-account.json`), or `{"service_account": <the file>, "project_id": "…"}` to
/// check it is for the app's Firebase project. It is refused with
/// `invalid_fcm_credentials`, naming the field at fault, and nothing is stored, when it is
/// malformed, for another project, its key doesn't sign, or the token endpoint refuses
/// it (tried once before it is stored, where the center will send).
struct FCMRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody
    /// Tries a service account at the token endpoint: nil when it took it, else why not.
    let check: (@Sendable (FCMServiceAccount) async -> String?)?

    func register(on routes: inout RouteRegistrar) {
        routes.on(.put, "/admin/v1/apps/{app_key}/fcm", access: .admin, confirm: true, use: set)
        routes.on(.get, "/admin/v1/apps/{app_key}/fcm", access: .admin, use: get)
        routes.on(.delete, "/admin/v1/apps/{app_key}/fcm", access: .admin, confirm: true, use: delete)
    }

    @Sendable func set(_ request: Request, context: HeraldRequestContext) async throws -> FCMStatusResponse {
        try await auth.requireAdmin(request)
        let appKey = try await AdminRoutes.app(context, in: store).appKey
        let account = try Self.account(in: try await body.bytes(of: request))
        if let check, let refusal = await check(account) {
            throw HeraldError(.invalidFCMCredentials, "service_account: the token endpoint refused it: \(refusal)")
        }
        guard try await store.fcm.setCredentials(account, appKey: appKey), let state = try await store.fcm.credentials(appKey: appKey) else {
            throw AdminRoutes.appNotFound
        }
        context.logger.info(
            "FCM credentials set",
            metadata: ["herald.app_key": "\(appKey)", "herald.fcm.project": "\(account.projectID)", "herald.fcm.key_id": "\(account.privateKeyID)"]
        )
        return FCMStatusResponse(state)
    }

    @Sendable func get(_ request: Request, context: HeraldRequestContext) async throws -> FCMStatusResponse {
        try await auth.requireAdmin(request)
        let appKey = try await AdminRoutes.app(context, in: store).appKey
        guard let state = try await store.fcm.credentials(appKey: appKey) else { throw Self.noCredentials }
        return FCMStatusResponse(state)
    }

    @Sendable func delete(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        try await auth.requireAdmin(request)
        let appKey = try await AdminRoutes.app(context, in: store).appKey
        guard try await store.fcm.deleteCredentials(appKey: appKey) else { throw Self.noCredentials }
        context.logger.info("FCM credentials removed", metadata: ["herald.app_key": "\(appKey)"])
        return .noContent
    }

    /// The service account in a body: the key file itself, or wrapped with the project it
    /// must be for.
    static func account(in buffer: ByteBuffer) throws(HeraldError) -> FCMServiceAccount {
        let bytes = Data(buffer.readableBytesView)
        guard let object = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any] else {
            throw HeraldError(.invalidJSON, "body: expected the service account's JSON key file, or {\"service_account\": …}")
        }
        guard let wrapped = object["service_account"] else { return try FCMServiceAccount.parse(bytes) }
        if let unknown = object.keys.first(where: { $0 != "service_account" && $0 != "project_id" }) {
            throw HeraldError(.unsupportedKey, "\(unknown): not a field of this request (service_account, project_id)")
        }
        let project: String?
        switch object["project_id"] {
        case nil, is NSNull: project = nil
        case let text as String: project = text
        default: throw HeraldError.invalidField("project_id", "expected a string")
        }
        // The file as an object, or as the string of its text.
        let inner: Data
        if let text = wrapped as? String {
            inner = Data(text.utf8)
        } else if JSONSerialization.isValidJSONObject(wrapped), let data = try? JSONSerialization.data(withJSONObject: wrapped) {
            inner = data
        } else {
            throw HeraldError.invalidField("service_account", "expected the key file's JSON object (or its text)")
        }
        return try FCMServiceAccount.parse(inner, expectedProjectID: project)
    }

    static let noCredentials = HeraldError(.fcmCredentialsNotFound, "the app has no FCM credentials")
}

/// What `GET /admin/v1/apps/{app_key}/fcm` answers: everything but the key.
struct FCMStatusResponse: ResponseEncodable {
    var projectID: String
    var clientEmail: String
    var privateKeyID: String
    var updatedAt: Date
    /// `ok`, or `broken` (with `problem`, FCM's reason): FCM refused them, nothing is sent
    /// to FCM for the app until new ones are uploaded.
    var status: String
    var problem: String?

    enum CodingKeys: String, CodingKey {
        case projectID = "project_id"
        case clientEmail = "client_email"
        case privateKeyID = "private_key_id"
        case updatedAt = "updated_at"
        case status
        case problem
    }

    init(_ state: FCMCredentialsState) {
        projectID = state.summary.projectID
        clientEmail = state.summary.clientEmail
        privateKeyID = state.summary.privateKeyID
        updatedAt = state.updatedAt
        status = state.brokenReason == nil ? "ok" : "broken"
        problem = state.brokenReason
    }
}
