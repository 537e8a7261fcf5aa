import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// Reads the credentials of a request.
struct Authentication: Sendable {
    let store: APIStore
    let adminToken: String
    /// Every credentials check that succeeds is recorded here (see ``VerifiedCredentials``).
    let verified: VerifiedCredentials
    let apps: AppCredentialCache

    init(store: APIStore, adminToken: String, verified: VerifiedCredentials = VerifiedCredentials()) {
        self.store = store
        self.adminToken = adminToken
        self.verified = verified
        self.apps = AppCredentialCache(verified: verified)
    }

    /// Requires `Authorization: Bearer <admin token>`.
    func requireAdmin(_ request: Request) throws {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw HeraldError(.unauthorized, "Authorization: expected Bearer with the admin token")
        }
        let token = String(header.dropFirst("Bearer ".count))
        guard SecretHash.matches(token, stored: SecretHash.digest(adminToken)) else {
            throw HeraldError(.unauthorized, "Authorization: wrong admin token")
        }
        verified.record(header)
    }

    /// Requires Basic `app_key:master_secret`.
    func requireApp(_ request: Request) async throws -> AppRecord {
        guard let app = try await apps.app(authorization: try basicHeader(request), store: store, credentials: Self.basicCredentials) else {
            throw HeraldError(.unauthorized, "Authorization: wrong app_key or master_secret")
        }
        return app
    }

    /// Requires Basic `app_key:master_secret`, or the device's own `registration_id:device_secret`.
    func requireAppOrDevice(_ request: Request, registrationID: String) async throws -> Principal {
        let header = try basicHeader(request)
        let (user, password) = try Self.basicCredentials(header)
        if Identifiers.isRegistrationID(user) {
            guard let principal = try await store.authenticateDevice(registrationID: user, deviceSecret: password) else {
                throw HeraldError(.unauthorized, "Authorization: wrong registration_id or device_secret")
            }
            verified.record(header)
            guard user == registrationID else {
                throw HeraldError(.forbidden, "a device may only act on its own registration")
            }
            return principal
        }
        guard let app = try await apps.app(authorization: header, store: store, credentials: Self.basicCredentials) else {
            throw HeraldError(.unauthorized, "Authorization: wrong app_key or master_secret")
        }
        return .app(appID: app.id, appKey: app.appKey)
    }

    private func basicHeader(_ request: Request) throws -> String {
        guard let header = request.headers[.authorization] else { throw Self.notBasic }
        return header
    }

    private static func basicCredentials(_ header: String) throws -> (appKey: String, masterSecret: String) {
        guard let credentials = BasicCredentials(authorization: header) else { throw notBasic }
        return (credentials.user, credentials.password)
    }

    private static let notBasic = HeraldError(.unauthorized, "Authorization: expected Basic app_key:master_secret")
}
