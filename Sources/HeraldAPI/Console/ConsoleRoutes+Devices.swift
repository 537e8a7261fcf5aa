import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// Finding a device and its page: what Herald knows of it, its latest copies, and why a
/// push might not reach it (the same findings as `heraldctl doctor` and
/// `GET /v3/devices/{registration_id}/diagnosis`: ``DeviceDiagnosis``).
extension ConsoleRoutes {
    @Sendable func devices(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard let app = try await reader(session, context) else { return noApp(session, context) }
        let query = (request.uri.queryParameters.get("q") ?? "").trimmingCharacters(in: .whitespaces)
        var values: [String: Any] = ["appKey": app.appKey, "appName": app.name, "query": query, "searched": !query.isEmpty]
        if !query.isEmpty {
            let found = try await store.console.findDevices(appID: app.id, query: String(query.prefix(256)))
            values["devices"] = found.map { ["registrationID": $0.registrationID, "platform": $0.platform, "alias": $0.alias ?? "—"] }
            values["hasDevices"] = !found.isEmpty
            values["deviceCount"] = found.count
        }
        return pages.page("devices", title: "Devices", values, person: session)
    }

    @Sendable func device(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard let app = try await reader(session, context) else { return noApp(session, context) }
        let registrationID = try context.parameter("registration_id")
        guard let device = try await store.device(appID: app.id, registrationID: registrationID),
            var facts = try await store.diagnosisFacts(app: app, registrationID: registrationID)
        else {
            return pages.page(
                "problem",
                title: "No such device",
                ["message": "No device \(registrationID) in \(app.name)."],
                person: session,
                status: .notFound
            )
        }
        facts.toSandbox = apnsDestination == .sandbox
        let formatter = ISO8601DateFormatter()
        let findings = DeviceDiagnosis(facts).findings
        let values: [String: Any] = [
            "appKey": app.appKey, "appName": app.name,
            "device": [
                "registrationID": device.registrationID, "platform": device.platform.rawValue, "alias": device.alias ?? "—",
                "language": device.language ?? "", "timeZone": device.timeZone ?? "",
            ],
            "online": device.node.map { "yes, on node \($0)" } ?? "no",
            "lastSeen": device.lastOnlineAt.map(formatter.string(from:)) ?? "never",
            "tags": device.tags.isEmpty ? "—" : device.tags.sorted().joined(separator: ", "),
            // Shortened: enough to tell tokens apart, not to use one.
            "apnsToken": device.apnsToken.map { "\($0.prefix(8))…\($0.suffix(4))" + (device.tokenValid ? "" : " (invalid)") } ?? "—",
            "findings": findings.map { ["level": $0.level.rawValue, "code": $0.code, "message": $0.message] },
            "hasFindings": !findings.isEmpty,
            "copies": facts.recent.map {
                [
                    "msgID": $0.msgID, "sentAt": formatter.string(from: $0.sentAt), "status": $0.status, "reason": $0.reason as Any,
                    "opened": $0.opened ? "yes" : "no",
                ]
            },
            "hasCopies": !facts.recent.isEmpty, "copyCount": facts.recent.count,
        ]
        return pages.page("device", title: "Device", values, person: session)
    }

    /// The app, when the person's role reads its devices.
    private func reader(_ session: ConsoleSession, _ context: HeraldRequestContext) async throws -> AppRecord? {
        let appKey = try context.parameter("app_key")
        guard let role = session.signedIn.person.role(onApp: appKey), role.scopes.grants(.devicesRead) else { return nil }
        return try await store.app(appKey: appKey)
    }

    private func noApp(_ session: ConsoleSession, _ context: HeraldRequestContext) -> Response {
        let appKey = (try? context.parameter("app_key")) ?? ""
        return pages.page("problem", title: "No such app", ["message": "No app \(appKey) that you can see."], person: session, status: .notFound)
    }
}
