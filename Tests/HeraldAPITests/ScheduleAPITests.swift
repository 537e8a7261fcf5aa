import Foundation
import HTTPTypes
import HeraldCore
import HeraldTestSupport
import Testing

/// `/v3/schedules`: JPush's shapes, its validation and its codes; the push inside checked
/// as a push is.
@Suite struct ScheduleAPITests {
    /// A wall time `days` days from now, in UTC (the zone of a new app's schedules).
    static func future(days: Int, time: String = "09:00:00") -> String {
        let date = LocalDateTime(Date().addingTimeInterval(Double(days) * 86_400), in: TimeZone(identifier: "UTC")!)
        return "\(date.description.prefix(10)) \(time)"
    }

    static func single(
        _ name: String = "nightly",
        at time: String = future(days: 2),
        push: String = #"{"platform": "all", "audience": "all", "notification": {"alert": "hi"}}"#
    ) -> String {
        #"{"name": "\#(name)", "enabled": true, "trigger": {"single": {"time": "\#(time)"}}, "push": \#(push)}"#
    }

    /// The bodies JPush's documentation and clients send: an empty cid (a Go client, on
    /// every create), `"message": {}` beside a notification, `"apns_production"` as a
    /// string, a bare platform, a field newer than Herald, `?page=` with no value, and
    /// JPush's form Content-Type on a JSON body. Each is taken as JPush takes it.
    @Test func jpushsDocumentedScheduleBodiesAreAccepted() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let push = #"""
                {"platform": "all", "audience": "all", "notification": {"alert": "hi", "ai_opportunity": false}, "message": {},
                 "options": {"apns_production": "false", "time_to_live": 60}}
                """#
            let body =
                #"{"cid": "", "name": "jpush", "enabled": true, "trigger": {"single": {"time": "\#(Self.future(days: 2))"}}, "push": \#(push)}"#
            let created = try await api.send(
                .post,
                "/v3/schedules",
                auth: app.auth,
                json: body,
                headers: [.contentType: "application/x-www-form-urlencoded"]
            )
            #expect(created.status == 200, "\(created.body)")
            #expect(try created.strings("warnings").map { $0.prefix { $0 != ":" } } == ["push.notification.ai_opportunity"])
            let id = try created.string("schedule_id")
            let shown = try await api.send(.get, "/v3/schedules/\(id)", auth: app.auth)
            let options = try #require((try shown.json["push"] as? [String: Any])?["options"] as? [String: Any])
            #expect(options["apns_production"] as? Bool == false)

            let updated = try await api.send(
                .put,
                "/v3/schedules/\(id)",
                auth: app.auth,
                json: #"{"push": {"platform": "android", "audience": "all", "notification": {"alert": "android only"}}}"#
            )
            #expect(updated.status == 200, "\(updated.body)")
            #expect((try updated.json["push"] as? [String: Any])?["platform"] as? [String] == ["android"])

            let page = try await api.send(.get, "/v3/schedules?page=", auth: app.auth)
            #expect(page.status == 200, "\(page.body)")
            #expect(try page.json["page"] as? Int == 1 && page.json["total_count"] as? Int == 1)
        }
    }

    @Test func aScheduleIsCreatedListedReadChangedAndDeletedInJPushsShapes() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let created = try await api.send(.post, "/v3/schedules", auth: app.auth, json: Self.single())
            #expect(created.status == 200)
            let id = try created.string("schedule_id")
            let name = try created.string("name")
            #expect(UUID(uuidString: id) != nil && name == "nightly")

            let list = try await api.send(.get, "/v3/schedules?page=1", auth: app.auth)
            let listed = try list.json
            #expect(listed["total_count"] as? Int == 1 && listed["total_pages"] as? Int == 1 && listed["page"] as? Int == 1)
            let schedules = try #require(listed["schedules"] as? [[String: Any]])
            #expect(schedules.first?["schedule_id"] as? String == id)
            #expect((schedules.first?["trigger"] as? [String: Any])?["single"] != nil)
            let secondPage = try await api.send(.get, "/v3/schedules?page=2", auth: app.auth)
            let second = try secondPage.json
            #expect((second["schedules"] as? [Any])?.isEmpty == true && second["page"] as? Int == 2)

            let shown = try await api.send(.get, "/v3/schedules/\(id)", auth: app.auth)
            #expect(shown.status == 200)
            #expect(try shown.json["enabled"] as? Bool == true)
            #expect(((try shown.json["push"] as? [String: Any])?["notification"] as? [String: Any])?["alert"] as? String == "hi")

            // Sections given replace the old ones whole; the others stay.
            let later = Self.future(days: 3, time: "10:30:00")
            let changed = try await api.send(
                .put,
                "/v3/schedules/\(id)",
                auth: app.auth,
                json: #"{"name": "renamed", "trigger": {"single": {"time": "\#(later)"}}}"#
            )
            #expect(changed.status == 200)
            #expect(try changed.string("name") == "renamed")
            #expect(((try changed.json["trigger"] as? [String: Any])?["single"] as? [String: Any])?["time"] as? String == later)
            let disabled = try await api.send(.put, "/v3/schedules/\(id)", auth: app.auth, json: #"{"enabled": false}"#)
            #expect(try disabled.json["enabled"] as? Bool == false)

            let msgIDs = try await api.send(.get, "/v3/schedules/\(id)/msg_ids", auth: app.auth)
            #expect(try msgIDs.json["count"] as? Int == 0)

            let deleted = try await api.send(.delete, "/v3/schedules/\(id)", auth: app.auth)
            #expect(deleted.status == 200 && deleted.body.isEmpty)
            let gone = try await api.send(.get, "/v3/schedules/\(id)", auth: app.auth)
            #expect(gone.status == 404 && gone.errorCode == HeraldError.Code.scheduleNotFound.rawValue)
            #expect(try await api.send(.delete, "/v3/schedules/\(id)", auth: app.auth).errorCode == HeraldError.Code.scheduleNotFound.rawValue)
        }
    }

    @Test func badTriggersNamesAndStatesAnswer8100AndChangeNothing() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let past = Self.future(days: -1)
            let bad: [(String, String)] = [
                ("a past time", Self.single(at: past)),
                ("more than a year ahead", Self.single(at: Self.future(days: 400))),
                ("a time without seconds", Self.single(at: "2030-01-01 09:00")),
                ("a name with a dash", Self.single("night-ly")),
                (
                    "disabled at creation",
                    #"{"name": "x", "enabled": false, "trigger": {"single": {"time": "\#(Self.future(days: 2))"}}, "push": {"audience": "all", "notification": {"alert": "x"}}}"#
                ),
                ("no trigger", #"{"name": "x", "enabled": true, "push": {"audience": "all", "notification": {"alert": "x"}}}"#),
                (
                    "a point on a daily trigger",
                    #"{"name": "x", "enabled": true, "trigger": {"periodical": {"start": "\#(Self.future(days: 1))", "end": "\#(Self.future(days: 30))", "time": "09:00:00", "time_unit": "day", "frequency": 1, "point": ["MON"]}}, "push": {"audience": "all", "notification": {"alert": "x"}}}"#
                ),
                (
                    "a weekday that isn't",
                    #"{"name": "x", "enabled": true, "trigger": {"periodical": {"start": "\#(Self.future(days: 1))", "end": "\#(Self.future(days: 30))", "time": "09:00:00", "time_unit": "week", "frequency": 1, "point": ["MONDAY"]}}, "push": {"audience": "all", "notification": {"alert": "x"}}}"#
                ),
                (
                    "an unknown zone",
                    #"{"name": "x", "enabled": true, "time_zone": "Mars/Olympus", "trigger": {"single": {"time": "\#(Self.future(days: 2))"}}, "push": {"audience": "all", "notification": {"alert": "x"}}}"#
                ),
                (
                    "a misspelled section",
                    #"{"name": "x", "enabled": true, "triger": 1, "trigger": {"single": {"time": "\#(Self.future(days: 2))"}}, "push": {"audience": "all", "notification": {"alert": "x"}}}"#
                ),
            ]
            for (what, body) in bad {
                let reply = try await api.send(.post, "/v3/schedules", auth: app.auth, json: body)
                #expect(reply.status == 400, "\(what): \(reply.body)")
                #expect(reply.errorCode == HeraldError.Code.invalidSchedule.rawValue, "\(what): \(reply.body)")
            }
            #expect(try await api.send(.get, "/v3/schedules", auth: app.auth).json["total_count"] as? Int == 0)

            // A single schedule stays single.
            let id = try await api.send(.post, "/v3/schedules", auth: app.auth, json: Self.single()).string("schedule_id")
            let periodical =
                #"{"trigger": {"periodical": {"start": "\#(Self.future(days: 1))", "end": "\#(Self.future(days: 30))", "time": "09:00:00", "time_unit": "day", "frequency": 1}}}"#
            let switched = try await api.send(.put, "/v3/schedules/\(id)", auth: app.auth, json: periodical)
            #expect(switched.errorCode == HeraldError.Code.invalidSchedule.rawValue)
        }
    }

    @Test func aBadPushIsRefusedWithThePushsOwnCode() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let cases: [(String, HeraldError.Code)] = [
                (#"{"audience": "all"}"#, .missingField),
                (#"{"audience": "all", "notification": {"alert": "x"}, "options": {"time_to_live": -1}}"#, .invalidField),
                (#"{"audience": {"tags": ["x"]}, "notification": {"alert": "x"}}"#, .unsupportedKey),
                (#"{"audience": "all", "notification": {"alert": "x"}, "options": {"override_msg_id": "123"}}"#, .invalidField),
            ]
            for (push, code) in cases {
                let reply = try await api.send(.post, "/v3/schedules", auth: app.auth, json: Self.single(push: push))
                #expect(reply.errorCode == code.rawValue, "\(push): \(reply.body)")
                let asPush = try await api.send(.post, "/v3/push", auth: app.auth, json: push)
                if code != .invalidField || !push.contains("override") {
                    #expect(asPush.errorCode == code.rawValue, "the same push to /v3/push: \(asPush.body)")
                }
            }
            #expect(try await api.send(.post, "/v3/schedules", auth: app.auth, json: "[1]").errorCode == HeraldError.Code.invalidJSON.rawValue)
        }
    }

    @Test func anotherAppsScheduleIsInvisibleAndUnknownIDsAre404() async throws {
        try await APITest.run { api in
            let alpha = try await api.createApp("Alpha")
            let beta = try await api.createApp("Beta")
            let id = try await api.send(.post, "/v3/schedules", auth: alpha.auth, json: Self.single()).string("schedule_id")
            for (method, path) in [
                (.get, "/v3/schedules/\(id)"), (.delete, "/v3/schedules/\(id)"), (.get, "/v3/schedules/\(id)/msg_ids"),
                (.get, "/v3/schedules/not-a-uuid"), (.get, "/v3/schedules/\(UUID().uuidString.lowercased())"),
            ] as [(HTTPRequest.Method, String)] {
                let reply = try await api.send(method, path, auth: beta.auth)
                #expect(reply.status == 404 && reply.errorCode == HeraldError.Code.scheduleNotFound.rawValue, "\(path): \(reply.body)")
            }
            let put = try await api.send(.put, "/v3/schedules/\(id)", auth: beta.auth, json: #"{"name": "mine"}"#)
            #expect(put.errorCode == HeraldError.Code.scheduleNotFound.rawValue)
            #expect(try await api.send(.get, "/v3/schedules", auth: beta.auth).json["total_count"] as? Int == 0)
            #expect(try await api.send(.get, "/v3/schedules/\(id)", auth: alpha.auth).string("name") == "nightly")
            #expect(try await api.send(.get, "/v3/schedules", auth: .basic(alpha.appKey, "wrong")).status == 401)
        }
    }

    @Test func aCidMakesOneScheduleAndTheAppsZoneIsSettable() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let body =
                #"{"cid": "retry-1", "name": "once", "enabled": true, "trigger": {"single": {"time": "\#(Self.future(days: 2))"}}, "push": {"audience": "all", "notification": {"alert": "x"}, "cid": "ignored"}}"#
            let first = try await api.send(.post, "/v3/schedules", auth: app.auth, json: body)
            let again = try await api.send(.post, "/v3/schedules", auth: app.auth, json: body)
            #expect(try first.string("schedule_id") == again.string("schedule_id"))
            #expect(try await api.send(.get, "/v3/schedules", auth: app.auth).json["total_count"] as? Int == 1)

            let zone = try await api.send(.put, "/admin/v1/apps/\(app.appKey)/time_zone", auth: .admin, json: #"{"time_zone": "Asia/Shanghai"}"#)
            #expect(try zone.string("time_zone") == "Asia/Shanghai")
            #expect(try await api.send(.get, "/admin/v1/apps/\(app.appKey)/time_zone", auth: .admin).string("time_zone") == "Asia/Shanghai")
            let bad = try await api.send(.put, "/admin/v1/apps/\(app.appKey)/time_zone", auth: .admin, json: #"{"time_zone": "Beijing"}"#)
            #expect(bad.errorCode == HeraldError.Code.invalidField.rawValue)
        }
    }

    @Test func devicesReportTheirTimeZone() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let reply = try await api.send(
                .post,
                "/v3/devices",
                json: #"{"app_key": "\#(app.appKey)", "platform": "android", "time_zone": "Europe/Berlin"}"#
            )
            let device = TestDevice(registrationID: try reply.string("registration_id"), secret: try reply.string("device_secret"))
            #expect(try await api.send(.get, "/v3/devices/\(device.registrationID)", auth: app.auth).string("time_zone") == "Europe/Berlin")
            let moved = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: device.auth, json: #"{"time_zone": "Asia/Tokyo"}"#)
            #expect(try moved.string("time_zone") == "Asia/Tokyo")
            let bad = try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: device.auth, json: #"{"time_zone": "Nowhere"}"#)
            #expect(bad.errorCode == HeraldError.Code.invalidField.rawValue)
            let badRegistration = try await api.send(
                .post,
                "/v3/devices",
                json: #"{"app_key": "\#(app.appKey)", "platform": "android", "time_zone": "+08:00"}"#
            )
            #expect(badRegistration.errorCode == HeraldError.Code.invalidField.rawValue)
        }
    }
}
