import Foundation
import HeraldCore
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// Every audience form, resolved in SQL, and bad requests that send nothing.
@Suite struct AudienceTests {
    @Test func everyAudienceFormTargetsExactlyItsDevices() async throws {
        try await TestNode.run { test in
            // a: news+sport, b: news, c: sport+muted, d: alias "dora", no tags
            let a = try await test.register(platform: "linux", alias: "anna", tags: ["news", "sport"])
            let b = try await test.register(platform: "linux", alias: "ben", tags: ["news"])
            let c = try await test.register(platform: "linux", alias: "cara", tags: ["sport", "muted"])
            let d = try await test.register(platform: "linux", alias: "dora")
            let names = [a.registrationID: "a", b.registrationID: "b", c.registrationID: "c", d.registrationID: "d"]
            let cases: [(JSON, Set<String>)] = [
                ("all", ["a", "b", "c", "d"]),
                (["registration_id": [JSON(a.registrationID), JSON(d.registrationID)]], ["a", "d"]),
                (["alias": ["ben", "cara", "nobody"]], ["b", "c"]),
                (["tag": ["news", "muted"]], ["a", "b", "c"]),
                (["tag_and": ["news", "sport"]], ["a"]),
                (["tag": ["news", "sport"], "tag_not": ["muted"]], ["a", "b"]),
                (["tag_and": ["sport"], "tag_not": ["news"]], ["c"]),
                (["alias": ["anna", "ben"], "tag": ["sport"]], ["a"]),
            ]
            for (audience, expected) in cases {
                let validated = try await test.call("POST", "/v3/push/validate", ["audience": audience, "message": ["msg_content": "x"]])
                #expect(validated.json["audience_size"].int == expected.count, "validate \(audience)")
                let sent = try await test.push(["audience": audience, "message": ["msg_content": "x"]])
                #expect(sent.status == 200)
                _ = try await test.settledReport(sent.msgID)
                let statuses = try await test.call(
                    "POST",
                    "/v3/report/status/message",
                    ["msg_id": JSON(sent.msgID), "registration_ids": JSON(Array(names.keys))]
                )
                let targeted = (statuses.json["statuses"].object ?? [:])
                    .filter { $0.value["status"].string != "not_targeted" }
                    .compactMap { names[$0.key] }
                #expect(Set(targeted) == expected, "push \(audience)")
            }
        }
    }

    @Test func badPushesAreRejectedWithTheFieldAndSendNothing() async throws {
        try await TestNode.run { test in
            _ = try await test.register(platform: "linux", alias: "x")
            let cases: [(JSON, HeraldError.Code, String)] = [
                (["audience": "everyone", "notification": ["alert": "a"]], .invalidField, "audience"),
                // An empty list is not set (JPush): nothing is.
                (["audience": ["alias": []], "notification": ["alert": "a"]], .invalidField, "audience: expected"),
                (
                    ["audience": ["tag": JSON((0..<21).map { "t\($0)" })], "notification": ["alert": "a"]],
                    .limitExceeded, "audience.tag"
                ),
                (["audience": ["tag_not": ["t"]], "notification": ["alert": "a"]], .invalidField, "audience"),
                (["audience": ["registration_id": ["nope"]], "notification": ["alert": "a"]], .invalidField, "audience.registration_id[0]"),
                (["audience": "all"], .missingField, "notification"),
                (["audience": "all", "notification": ["alert": "a"], "options": ["time_to_live": 864_001]], .invalidField, "options.time_to_live"),
                (
                    ["audience": "all", "notification": ["alert": "a"], "options": ["identifier": JSON(String(repeating: "i", count: 65))]],
                    .invalidField,
                    "options.identifier"
                ),
                (["audience": "all", "notification": ["ios": ["badge": "two"]]], .invalidField, "notification.ios.badge"),
                (["audience": "all", "notification": ["ios": ["alert": "a", "push_type": "loud"]]], .invalidField, "notification.ios.push_type"),
                (["audience": "all", "notification": ["alert": "a"], "notificaton": 1], .unsupportedKey, "notificaton"),
                (["audience": "all", "message": ["msg_content": ""]], .invalidField, "message.msg_content"),
                (["audience": ["alias": ["nobody"]], "notification": ["alert": "a"]], .noAudienceMatch, "audience"),
            ]
            for (body, code, field) in cases {
                let response = try await test.push(body)
                #expect(response.status >= 400 && response.status < 500, "\(body)")
                #expect(response.error == code.rawValue, "\(body) → \(response.json)")
                let message = response.json["error"]["message"].string ?? ""
                #expect(message.hasPrefix(field), "\(message) should name \(field)")
            }
            let rows = try await test.stores.sql.query("SELECT count(*) FROM messages", logger: TestDatabase.logger)
            for try await count in rows.decode(Int64.self) { #expect(count == 0) }
        }
    }

    @Test func oneAppCanNeverPushToRecallOrReadAnothersMessages() async throws {
        try await TestNode.run { test in
            let mine = try await test.register(platform: "linux", alias: "shared-name")
            let sent = try await test.push(["audience": ["alias": ["shared-name"]], "message": ["msg_content": "mine"]])
            #expect(sent.status == 200)
            let other = try await test.stores.api.createApp(name: "Other")
            let key = other.app.appKey
            let secret = other.masterSecret
            let byRID = try await test.call(
                "POST",
                "/v3/push",
                ["audience": ["registration_id": [JSON(mine.registrationID)]], "message": ["msg_content": "theirs"]],
                as: .basic(key, secret)
            )
            #expect(byRID.error == HeraldError.Code.noAudienceMatch.rawValue)
            let byAlias = try await test.call(
                "POST",
                "/v3/push",
                ["audience": ["alias": ["shared-name"]], "message": ["msg_content": "theirs"]],
                as: .basic(key, secret)
            )
            #expect(byAlias.error == HeraldError.Code.noAudienceMatch.rawValue)
            let all = try await test.call(
                "POST",
                "/v3/push/validate",
                ["audience": "all", "message": ["msg_content": "x"]],
                as: .basic(key, secret)
            )
            #expect(all.error == HeraldError.Code.noAudienceMatch.rawValue)
            let recall = try await test.call("DELETE", "/v3/push/\(sent.msgID)", as: .basic(key, secret))
            #expect(recall.status == 404)
            #expect(recall.error == HeraldError.Code.messageNotFound.rawValue)
            let report = try await test.call("GET", "/v3/report/received?msg_ids=\(sent.msgID)", as: .basic(key, secret))
            #expect(report.json["reports"].array?.isEmpty == true)
            let status = try await test.call(
                "POST",
                "/v3/report/status/message",
                ["msg_id": JSON(sent.msgID), "registration_ids": [JSON(mine.registrationID)]],
                as: .basic(key, secret)
            )
            #expect(status.error == HeraldError.Code.messageNotFound.rawValue)
        }
    }
}
