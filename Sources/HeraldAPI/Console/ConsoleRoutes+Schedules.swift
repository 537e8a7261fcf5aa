import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

/// An app's schedules: listed with when each fires next, paused and resumed, and edited
/// as the body `PUT /v3/schedules/{schedule_id}` takes (decoded and validated by the same
/// code). Operators and admins (the `schedules` scope).
extension ConsoleRoutes {
    @Sendable func schedulesPage(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard let (app, _) = try await member(session, context, needs: .schedules) else { return noSchedules(session) }
        let found = try await store.schedules.list(appID: app.id, page: 1, pageSize: 100)
        let formatter = ISO8601DateFormatter()
        let rows: [[String: Any]] = found.schedules.map { schedule in
            [
                "scheduleID": schedule.scheduleID, "name": schedule.definition.name, "enabled": schedule.definition.enabled,
                "trigger": String(decoding: schedule.definition.trigger.json.bytes, as: UTF8.self),
                "next": schedule.nextFireAt.map(formatter.string(from:)) ?? "—",
                "zone": schedule.definition.timeZone ?? "the app's (\(app.timeZone))",
            ]
        }
        return pages.page(
            "schedules",
            title: "Schedules",
            [
                "appKey": app.appKey, "appName": app.name, "csrf": session.csrf, "schedules": rows, "hasSchedules": !rows.isEmpty,
                "total": found.total,
            ],
            person: session
        )
    }

    /// Pauses (`enabled=0`) or resumes (`enabled=1`) a schedule.
    @Sendable func pauseSchedule(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        let fields = try await FormBody.fields(request)
        guard Self.isGenuine(request, fields) else { return forbidden("This form is stale or from another site: reload the page.") }
        guard let (app, _) = try await member(session, context, needs: .schedules) else { return noSchedules(session) }
        RouteAccess.serving?.audit?.identify(actor: session.signedIn.actor, appID: app.id)
        let enabled = fields["enabled"] == "1"
        do {
            _ = try await store.schedules.update(appID: app.id, scheduleID: try context.parameter("schedule_id")) { existing in
                var changed = existing
                changed.enabled = enabled
                return changed
            }
        } catch let error as HeraldError {
            return pages.page("problem", title: "Not changed", ["message": error.message], person: session, status: .badRequest)
        }
        return ConsolePages.redirect(to: "/console/apps/\(app.appKey)/schedules")
    }

    @Sendable func editSchedulePage(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        guard let (app, _) = try await member(session, context, needs: .schedules) else { return noSchedules(session) }
        let scheduleID = try context.parameter("schedule_id")
        guard let schedule = try await store.schedules.find(appID: app.id, scheduleID: scheduleID), !schedule.finished else {
            return pages.page(
                "problem",
                title: "No such schedule",
                ["message": "No schedule \(scheduleID) in \(app.name)."],
                person: session,
                status: .notFound
            )
        }
        return editSchedule(session, app, scheduleID: scheduleID, body: Self.editableBody(schedule))
    }

    @Sendable func saveSchedule(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let session = try await auth.consoleSession(request) else { return ConsolePages.redirect(to: Self.signInPath) }
        let fields = try await FormBody.fields(request, maxSize: 64 * 1024)
        guard Self.isGenuine(request, fields) else { return forbidden("This form is stale or from another site: reload the page.") }
        guard let (app, _) = try await member(session, context, needs: .schedules) else { return noSchedules(session) }
        RouteAccess.serving?.audit?.identify(actor: session.signedIn.actor, appID: app.id)
        let scheduleID = try context.parameter("schedule_id")
        let body = fields["body"] ?? ""
        do {
            let (scheduleFields, push, _) = try schedules.decode(Data(body.utf8))
            _ = try await store.schedules.update(appID: app.id, scheduleID: scheduleID) { existing in
                try scheduleFields.updating(existing, push: push)
            }
        } catch let error as HeraldError {
            return editSchedule(session, app, scheduleID: scheduleID, body: body, error: error.message, status: .badRequest)
        }
        return ConsolePages.redirect(to: "/console/apps/\(app.appKey)/schedules")
    }

    /// The schedule as its editor shows it: the body `PUT` takes (what the API answers,
    /// without what it computes).
    static func editableBody(_ schedule: ScheduleRecord) -> String {
        guard case .object(var fields) = schedule.json else { return "{}" }
        fields["schedule_id"] = nil
        fields["next_fire_at"] = nil
        return pretty(String(decoding: JSONValue.object(fields).bytes, as: UTF8.self))
    }

    private func editSchedule(
        _ session: ConsoleSession,
        _ app: AppRecord,
        scheduleID: String,
        body: String,
        error: String? = nil,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        var values: [String: Any] = ["appKey": app.appKey, "appName": app.name, "csrf": session.csrf, "scheduleID": scheduleID, "body": body]
        if let error { values["error"] = error }
        return pages.page("schedule", title: "Edit schedule", values, person: session, status: status)
    }

    private func noSchedules(_ session: ConsoleSession) -> Response {
        pages.page(
            "problem",
            title: "Not yours to see",
            ["message": "Schedules need the operator or admin role on this app."],
            person: session,
            status: .forbidden
        )
    }
}
