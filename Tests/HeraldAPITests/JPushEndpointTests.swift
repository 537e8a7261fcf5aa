import Foundation
import HTTPTypes
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

/// JPush's v3 routes beyond push, devices and tags: cids, quota, device presence, alias
/// members, the shape of the report routes, and which unknown paths are 404s.
@Suite struct JPushEndpointTests {
    @Test func cidsAreIssuedForTheAppWithinTheLimits() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let one = try await api.send(.get, "/v3/push/cid", auth: app.auth)
            #expect(one.status == 200)
            let cid = try #require(try one.strings("cidlist").first)
            #expect(try one.strings("cidlist").count == 1)
            #expect(cid.hasPrefix("\(app.appKey)-") && UUID(uuidString: String(cid.dropFirst(app.appKey.count + 1))) != nil, "\(cid)")
            #expect(cid.utf8.count <= PushLimits.maxCIDBytes)
            let many = try await api.send(.get, "/v3/push/cid?count=1000&type=schedule", auth: app.auth)
            #expect(Set(try many.strings("cidlist")).count == 1000)
            for query in ["count=0", "count=1001", "count=-3", "count=ten", "type=sms"] {
                let reply = try await api.send(.get, "/v3/push/cid?\(query)", auth: app.auth)
                #expect(reply.status == 400, "\(query)")
                let code = query == "count=1001" ? HeraldError.Code.limitExceeded : .invalidField
                #expect(reply.errorCode == code.rawValue, "\(query) → \(reply.body)")
            }
            #expect(try await api.send(.get, "/v3/push/cid").errorCode == HeraldError.Code.unauthorized.rawValue)

            // An issued cid makes a push idempotent like any other.
            let device = try await api.registerDevice(app)
            let push = #"{"audience": {"registration_id": ["\#(device.registrationID)"]}, "notification": {"alert": "x"}, "cid": "\#(cid)"}"#
            let first = try await api.send(.post, "/v3/push", auth: app.auth, json: push)
            let second = try await api.send(.post, "/v3/push", auth: app.auth, json: push)
            #expect(try first.string("msg_id") == second.string("msg_id"))
        }
    }

    @Test func theQuotaSaysHeraldMetersNothingInJPushsShape() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let reply = try await api.send(.get, "/v3/push/quota", auth: app.auth)
            #expect(reply.status == 200)
            let json = try reply.json
            #expect(json["code"] as? Int == 0)
            #expect((json["message"] as? String)?.isEmpty == false)
            let data = try #require(json["data"] as? [String: Any])
            #expect(Set(data.keys) == ["xiaomi_quota", "oppo_quota", "vivo_quota"])
            for case let vendor as [String: Any] in data.values {
                for kind in ["system", "operation"] {
                    let usage = vendor[kind] as? [String: Any]
                    #expect(usage?["total"] as? Int == -1 && usage?["used"] as? Int == -1)
                }
            }
            #expect(try await api.send(.get, "/v3/push/quota").errorCode == HeraldError.Code.unauthorized.rawValue)
        }
    }

    /// Presence as `device_sessions` holds it: connected to a live node, disconnected with
    /// the time, never connected, and null for what is no device of this app.
    @Test func deviceStatusReportsPresenceAndNullForOtherAppsDevices() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let other = try await api.createApp("Other")
            let online = try await api.registerDevice(app)
            let offline = try await api.registerDevice(app)
            let never = try await api.registerDevice(app)
            let foreign = try await api.registerDevice(other)
            try await api.store.sql.query(
                """
                INSERT INTO nodes (node_id) VALUES ('node-a');
                """,
                logger: TestDatabase.logger
            )
            for (device, node, seen) in [(online, "node-a", "now()"), (offline, "NULL", "'2025-01-31 08:15:00+00'"), (foreign, "node-a", "now()")] {
                try await api.store.sql.query(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO device_sessions (device_id, epoch, node_id, last_seen_at)
                            SELECT id, 1, \(node == "NULL" ? "NULL" : "'\(node)'"), \(seen) FROM devices WHERE registration_id = '\(device.registrationID)'
                            """
                    ),
                    logger: TestDatabase.logger
                )
            }
            let ids = [online, offline, never, foreign].map(\.registrationID) + [unknownRegistrationID(), "not-an-id"]
            let reply = try await api.send(.post, "/v3/devices/status", auth: app.auth, json: #"{"registration_ids": \#(ids.json)}"#)
            #expect(reply.status == 200, "\(reply.body)")
            let json = try reply.json
            #expect(Set(json.keys) == Set(ids))
            #expect(json[online.registrationID] as? [String: Bool] == ["online": true])
            let gone = json[offline.registrationID] as? [String: Any]
            #expect(gone?["online"] as? Bool == false && gone?["last_online_time"] as? String == "2025-01-31 08:15:00")
            #expect(json[never.registrationID] as? [String: Bool] == ["online": false])
            for id in [foreign.registrationID, ids[4], ids[5]] { #expect(json[id] is NSNull, "\(id): \(reply.body)") }

            for (body, code) in [
                (#"{"registration_ids": []}"#, HeraldError.Code.invalidField),
                (#"{"registration_ids": \#(Array(repeating: online.registrationID, count: 1001).json)}"#, .limitExceeded),
                (#"{"registration_ids": "x"}"#, .invalidField),
                (#"{"rids": []}"#, .unsupportedKey),
            ] {
                let bad = try await api.send(.post, "/v3/devices/status", auth: app.auth, json: body)
                #expect(bad.errorCode == code.rawValue, "\(body.prefix(50)) → \(bad.body)")
            }
            // The device API's own route still serves a device named like the literal.
            #expect(try await api.send(.get, "/v3/devices/\(online.registrationID)", auth: app.auth).status == 200)
        }
    }

    @Test func removingDevicesFromAnAliasChangesOnlyThemAndBadInputChangesNothing() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let other = try await api.createApp("Other")
            let a = try await api.registerDevice(app)
            let b = try await api.registerDevice(app)
            let c = try await api.registerDevice(app)
            let foreign = try await api.registerDevice(other)
            for device in [a, b, c] {
                try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"alias": "team"}"#)
            }
            try await api.send(.post, "/v3/devices/\(foreign.registrationID)", auth: other.auth, json: #"{"alias": "team"}"#)
            let members = { (app: TestApp) in try await api.send(.get, "/v3/aliases/team", auth: app.auth).strings("registration_ids") }
            let before = try await members(app)

            let bad: [(String, HeraldError.Code)] = [
                (#"{"registration_ids": {"remove": ["\#(a.registrationID)", "\#(foreign.registrationID)"]}}"#, .deviceNotFound),
                (#"{"registration_ids": {"add": ["\#(a.registrationID)"]}}"#, .unsupportedKey),
                (#"{"registration_ids": {"remove": ["\#(a.registrationID)"], "add": []}}"#, .unsupportedKey),
                (#"{"registration_ids": {"remove": []}}"#, .invalidField),
                (#"{"registration_ids": {"remove": ["nope"]}}"#, .invalidField),
                (#"{"registration_ids": ["\#(a.registrationID)"]}"#, .invalidField),
                (#"{"registration_ids": {"remove": \#(Array(repeating: a.registrationID, count: 1001).json)}}"#, .limitExceeded),
            ]
            for (body, code) in bad {
                let reply = try await api.send(.post, "/v3/aliases/team", auth: app.auth, json: body)
                #expect(reply.errorCode == code.rawValue, "\(body.prefix(60)) → \(reply.body)")
            }
            #expect(try await members(app) == before)

            let reply = try await api.send(
                .post,
                "/v3/aliases/team",
                auth: app.auth,
                json: #"{"registration_ids": {"remove": ["\#(a.registrationID)", "\#(b.registrationID)", "\#(b.registrationID)"]}}"#
            )
            #expect(reply.status == 200, "\(reply.body)")
            #expect(try reply.json["removed"] as? Int == 2)
            #expect(try await members(app) == [c.registrationID])
            #expect(try await members(other) == [foreign.registrationID])
            // A device without the alias is left as it is.
            let again = try await api.send(
                .post,
                "/v3/aliases/team",
                auth: app.auth,
                json: #"{"registration_ids": {"remove": ["\#(a.registrationID)"]}}"#
            )
            #expect(try again.json["removed"] as? Int == 0)
        }
    }

    /// The report routes read only the caller's messages, and check their input as
    /// `/v3/report/received` does.
    @Test func theReportRoutesSeeOnlyTheAppsOwnMessages() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let other = try await api.createApp("Other")
            let device = try await api.registerDevice(app)
            let push = try await api.send(
                .post,
                "/v3/push",
                auth: app.auth,
                json: #"{"audience": {"registration_id": ["\#(device.registrationID)"]}, "message": {"msg_content": "x"}}"#
            )
            let msgID = try push.string("msg_id")
            for path in ["/v3/received", "/v3/received/detail", "/v3/messages/detail", "/v3/messages"] {
                let mine = try await api.send(.get, "\(path)?msg_ids=\(msgID)", auth: app.auth)
                let rows = try JSONSerialization.jsonObject(with: Data(mine.body.utf8)) as? [[String: Any]]
                #expect(rows?.count == 1 && rows?.first?["msg_id"] as? String == msgID, "\(path): \(mine.body)")
                let theirs = try await api.send(.get, "\(path)?msg_ids=\(msgID)", auth: other.auth)
                #expect(theirs.status == 200 && theirs.body == "[]", "\(path): \(theirs.body)")
                let many = (0..<101).map { _ in msgID }.joined(separator: ",")
                for (query, code) in [("", HeraldError.Code.missingField), ("?msg_ids=nope", .invalidField), ("?msg_ids=\(many)", .limitExceeded)] {
                    #expect(try await api.send(.get, path + query, auth: app.auth).errorCode == code.rawValue, "\(path)\(query.prefix(30))")
                }
            }
            let status = try await api.send(
                .post,
                "/v3/status/message",
                auth: other.auth,
                json: #"{"msg_id": "\#(msgID)", "registration_ids": ["\#(device.registrationID)"]}"#
            )
            #expect(status.errorCode == HeraldError.Code.messageNotFound.rawValue)
            for (body, code) in [
                (#"{"msg_id": "\#(msgID)", "registration_ids": []}"#, HeraldError.Code.invalidField),
                (#"{"msg_id": 12345, "registration_ids": ["\#(device.registrationID)"]}"#, .messageNotFound),
                (#"{"msg_id": "\#(msgID)", "registration_ids": ["\#(device.registrationID)"], "date": "yesterday"}"#, .invalidField),
                (#"{"msg_id": "\#(msgID)", "registration_ids": \#(Array(repeating: device.registrationID, count: 1001).json)}"#, .limitExceeded),
                (#"{"msg_id": "\#(msgID)", "registration_ids": ["\#(device.registrationID)"], "extra": 1}"#, .unsupportedKey),
            ] {
                let reply = try await api.send(.post, "/v3/status/message", auth: app.auth, json: body)
                #expect(reply.errorCode == code.rawValue, "\(body.prefix(70)) → \(reply.body)")
            }
            let dated = try await api.send(
                .post,
                "/v3/status/message",
                auth: app.auth,
                json: #"{"msg_id": "\#(msgID)", "registration_ids": ["\#(device.registrationID)"], "date": "2025-01-31"}"#
            )
            #expect(dated.status == 200, "\(dated.body)")
            // JPush's PHP client names the date `data`.
            for (date, status) in [("2025-01-31", 200), ("yesterday", 400)] {
                let php = try await api.send(
                    .post,
                    "/v3/status/message",
                    auth: app.auth,
                    json: #"{"msg_id": "\#(msgID)", "registration_ids": ["\#(device.registrationID)"], "data": "\#(date)"}"#
                )
                #expect(php.status == status, "\(php.body)")
                if status == 200 { #expect(php.body == dated.body) }
            }
            // JPush's Java client sends the id as a number: the same message.
            let numeric = try await api.send(
                .post,
                "/v3/status/message",
                auth: app.auth,
                json: #"{"msg_id": \#(try #require(Int64(msgID))), "registration_ids": ["\#(device.registrationID)"]}"#
            )
            #expect(numeric.status == 200 && numeric.body == dated.body, "\(numeric.body)")
        }
    }

    /// A path no route pattern matches, for any method, is a 404; a path a route has, asked
    /// with another method, is a 405 that says which methods it has.
    @Test func unknownSubpathsAre404AndRealPathsWithTheWrongMethodAre405() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let msgID = "0123456789abcdef01234567"
            let rid = unknownRegistrationID()
            let notFound: [(HTTPRequest.Method, String)] = [
                (.get, "/v3/push/quotas"), (.get, "/v3/push/batch"), (.post, "/v3/push/batch/regid"), (.get, "/v3/push/cid/more"),
                (.put, "/v3/devices/not-a-registration-id"), (.get, "/v3/received/nothing"), (.get, "/v3/messages/x"),
                (.get, "/v3/status/message/x"), (.put, "/admin/v1/apps/not-a-key"), (.delete, "/v3/push/not-a-message-id"),
            ]
            for (method, path) in notFound {
                let reply = try await api.send(method, path, auth: app.auth)
                #expect(reply.status == 404, "\(method) \(path) → \(reply.status) \(reply.body)")
                if method != .delete {
                    #expect(reply.errorCode == HeraldError.Code.routeNotFound.rawValue, "\(method) \(path) → \(reply.body)")
                }
            }
            let wrongMethod: [(HTTPRequest.Method, String, String)] = [
                (.delete, "/v3/push/cid", "GET"), (.post, "/v3/push/quota", "GET"), (.get, "/v3/push/batch/regid/single", "POST"),
                (.get, "/v3/devices/status", "POST"), (.get, "/v3/push/\(msgID)", "DELETE"), (.put, "/v3/devices/\(rid)", "GET, POST, DELETE"),
                (.post, "/v3/received", "GET"), (.post, "/v3/messages", "GET"), (.get, "/v3/status/message", "POST"),
                (.put, "/v3/aliases/any", "GET, POST, DELETE"),
            ]
            for (method, path, allowed) in wrongMethod {
                let reply = try await api.send(method, path, auth: app.auth)
                #expect(reply.status == 405, "\(method) \(path) → \(reply.status) \(reply.body)")
                #expect(reply.errorCode == HeraldError.Code.methodNotAllowed.rawValue)
                #expect(reply.headers[.allow] == allowed, "\(method) \(path)")
            }
        }
    }
}

extension [String] {
    /// The strings as a JSON array.
    var json: String { "[" + map { "\"\($0)\"" }.joined(separator: ",") + "]" }
}
