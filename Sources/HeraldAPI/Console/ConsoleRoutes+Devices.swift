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
        guard let (app, _) = try await member(session, context, needs: .devicesRead) else { return noApp(session, context) }
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
        guard let (app, role) = try await member(session, context, needs: .devicesRead) else { return noApp(session, context) }
        let registrationID = try context.parameter("registration_id")
        guard let device = try await store.devices.find(appID: app.id, registrationID: registrationID),
            var facts = try await store.devices.diagnosisFacts(app: app, registrationID: registrationID)
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
            "tags": device.tags.sorted(), "hasTags": !device.tags.isEmpty, "csrf": session.csrf,
            "mayEdit": role.scopes.grants(.devicesWrite),
            "test": try await store.console.isTestDevice(appID: app.id, registrationID: registrationID) ?? false,
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

    /// Tags added (a comma-separated list) or one removed, in place; operators and admins.
    @Sendable func changeTags(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        try await changeDevice(request, context) { app, registrationID, fields in
            var change = DeviceChange()
            let added = (fields["add"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            change.addTags = try Validation.labels(added, field: "tags", max: Limits.maxTagsPerChange)
            if let removed = fields["remove"], !removed.isEmpty { change.removeTags = [removed] }
            guard !change.isEmpty else { throw HeraldError.missingField("tags", "name a tag to add") }
            _ = try await store.devices.update(appID: app.id, registrationID: registrationID, change)
        }
    }

    /// Marks the device as a test device (`test=1`) or not: the composer's "test devices
    /// only" sends to these.
    @Sendable func markTestDevice(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        try await changeDevice(request, context) { app, registrationID, fields in
            guard try await store.console.setTestDevice(appID: app.id, registrationID: registrationID, fields["test"] == "1") else {
                throw HeraldError(.deviceNotFound, "no device \(registrationID) in this app")
            }
        }
    }

    /// A form that changes a device: from this site with the session's token, by a role that
    /// writes devices; back to the device's page, or the reason it was refused.
    private func changeDevice(
        _ request: Request,
        _ context: HeraldRequestContext,
        _ change: (AppRecord, String, [String: String]) async throws -> Void
    ) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        let fields = try await FormBody.fields(request)
        guard Self.isGenuine(request, fields) else { return forbidden("This form is stale or from another site: reload the page.") }
        guard let (app, _) = try await member(session, context, needs: .devicesWrite) else {
            return pages.page(
                "problem",
                title: "Not yours to change",
                ["message": "Changing a device needs the operator or admin role on this app."],
                person: session,
                status: .forbidden
            )
        }
        RouteAccess.serving?.audit?.identify(actor: session.signedIn.actor, appID: app.id)
        let registrationID = try context.parameter("registration_id")
        do {
            try await change(app, registrationID, fields)
        } catch let error as HeraldError {
            return pages.page("problem", title: "Not changed", ["message": error.message], person: session, status: .badRequest)
        }
        return ConsolePages.redirect(to: "/console/apps/\(app.appKey)/devices/\(registrationID)")
    }
}
