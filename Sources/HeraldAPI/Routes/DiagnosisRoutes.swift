import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `GET /v3/devices/{registration_id}/diagnosis`: why a device did or did not get its
/// pushes (``DeviceDiagnosis``), for `heraldctl doctor`.
struct DiagnosisRoutes {
    let store: APIStore
    let auth: Authentication
    let apnsDestination: APNsDestination

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v3/devices/{registration_id}/diagnosis", access: .app(.reportsRead), use: diagnose)
    }

    @Sendable func diagnose(_ request: Request, context: HeraldRequestContext) async throws -> DiagnosisResponse {
        let app = try await auth.requireApp(request)
        let registrationID = try context.parameter("registration_id")
        // The credentials' state as APNs last judged it, not as the cache saw it seconds ago.
        let current = try await store.app(appKey: app.appKey) ?? app
        guard var facts = try await store.devices.diagnosisFacts(app: current, registrationID: registrationID) else {
            throw HeraldError(.deviceNotFound, "registration_id: no device \(registrationID) in this app")
        }
        facts.toSandbox = apnsDestination == .sandbox
        return DiagnosisResponse(registrationID: registrationID, facts: facts, diagnosis: DeviceDiagnosis(facts))
    }
}

struct DiagnosisResponse: ResponseEncodable {
    struct Token: Encodable {
        var present: Bool
        var valid: Bool
        var environment: String?
        var invalidatedAt: Date?
    }

    struct Credentials: Encodable {
        var type: String
        var environment: String
        var problem: String?
    }

    struct Copy: Encodable {
        var msgID: String
        var sentAt: Date
        var status: String
        var reason: String?
        var opened: Bool

        enum CodingKeys: String, CodingKey {
            case sentAt, status, reason, opened
            case msgID = "msg_id"
        }
    }

    var registrationID: String
    var platform: String
    var online: Bool
    var node: String?
    var lastOnlineAt: Date?
    var apnsToken: Token
    var apnsCredentials: Credentials?
    var recent: [Copy]
    var findings: [DeviceDiagnosis.Finding]

    enum CodingKeys: String, CodingKey {
        case registrationID = "registration_id"
        case platform, online, node, lastOnlineAt, apnsToken, apnsCredentials, recent, findings
    }

    init(registrationID: String, facts: DeviceDiagnosis.Facts, diagnosis: DeviceDiagnosis) {
        self.registrationID = registrationID
        platform = facts.platform.rawValue
        online = facts.node != nil
        node = facts.node
        lastOnlineAt = facts.lastOnlineAt
        apnsToken = Token(
            present: facts.hasAPNsToken,
            valid: facts.tokenValid,
            environment: facts.tokenEnvironment?.rawValue,
            invalidatedAt: facts.tokenInvalidatedAt
        )
        apnsCredentials = facts.credentials.map {
            Credentials(type: $0.type.rawValue, environment: $0.environment.rawValue, problem: facts.credentialsProblem)
        }
        recent = facts.recent.map { Copy(msgID: $0.msgID, sentAt: $0.sentAt, status: $0.status, reason: $0.reason, opened: $0.opened) }
        findings = diagnosis.findings
    }
}
