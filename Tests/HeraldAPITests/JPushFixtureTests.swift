import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// JPush's documented push bodies (`Tests/Fixtures/jpush/push/`) sent unchanged to a real
/// API: each gets the answer its fixture says, from `POST /v3/push` and from
/// `POST /v3/push/validate`.
@Suite struct JPushFixtureTests {
    @Test func everyJPushBodyGetsItsAnswer() async throws {
        let fixtures = try JPushFixture.all()
        #expect(fixtures.count >= 20)
        try await APITest.run { api in
            let app = try await api.createApp()
            let ios = try await api.registerDevice(app, platform: "ios", apnsToken: randomAPNsToken())
            let android = try await api.registerDevice(app, platform: "android")
            for (device, body) in [
                (ios, #"{"alias": "4314", "tags": {"add": ["深圳", "北京"]}}"#), (android, #"{"alias": "892", "tags": {"add": ["深圳", "广州"]}}"#),
            ] {
                #expect(try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: body).status == 200)
            }
            // The push the full example's override_msg_id replaces.
            let earlier = try await api.send(.post, "/v3/push", auth: app.auth, json: #"{"audience": "all", "notification": {"alert": "first"}}"#)
            let msgID = try earlier.string("msg_id")
            let placeholders = ["$IOS_RID": ios.registrationID, "$ANDROID_RID": android.registrationID, "$MSG_ID": msgID]
            for fixture in fixtures {
                let body = fixture.body(replacing: placeholders)
                let pushed = try await api.send(.post, "/v3/push", auth: app.auth, json: body)
                try fixture.check(pushed, validation: false)
                let validated = try await api.send(.post, "/v3/push/validate", auth: app.auth, json: body)
                try fixture.check(validated, validation: true)
            }
        }
    }

    @Test func validateCountsTheAudienceNarrowedToThePlatforms() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            _ = try await api.registerDevice(app, platform: "ios", apnsToken: randomAPNsToken())
            _ = try await api.registerDevice(app, platform: "ipados")
            _ = try await api.registerDevice(app, platform: "android")
            _ = try await api.registerDevice(app, platform: "linux")
            for (platform, size) in [
                (#""all""#, 4), (#"["android"]"#, 1), (#"["ios"]"#, 2), (#"["ipados", "linux"]"#, 2), (#"["android", "ios"]"#, 3),
            ] {
                let reply = try await api.send(
                    .post,
                    "/v3/push/validate",
                    auth: app.auth,
                    json: #"{"platform": \#(platform), "audience": "all", "notification": {"alert": "Hi"}, "options": {"sendno": 3}}"#
                )
                #expect(reply.status == 200, "\(platform): \(reply.body)")
                #expect(try reply.json["audience_size"] as? Int == size, "\(platform): \(reply.body)")
                #expect(try reply.string("sendno") == "3")
                #expect(try reply.string("msg_id") == "0")
            }
        }
    }

    @Test func theOverridingPushReplacesTheMessageItNames() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            _ = try await api.registerDevice(app, platform: "android")
            let first = try await api.send(
                .post,
                "/v3/push",
                auth: app.auth,
                json: #"{"platform": "all", "audience": "all", "notification": {"alert": "v1"}, "options": {"apns_collapse_id": "score"}}"#
            )
            let overriding = try await api.send(
                .post,
                "/v3/push",
                auth: app.auth,
                json:
                    #"{"platform": "all", "audience": "all", "notification": {"alert": "v2"}, "options": {"override_msg_id": "\#(try first.string("msg_id"))"}}"#
            )
            #expect(overriding.status == 200)
            let rows = try await api.store.sql.query(
                "SELECT msg_id, identifier, replaces, superseded_at IS NOT NULL FROM messages ORDER BY id",
                logger: TestDatabase.logger
            )
            var messages: [(String, String, String?, Bool)] = []
            for try await row in rows.decode((String, String, String?, Bool).self) { messages.append(row) }
            #expect(messages.count == 2)
            #expect(messages.first?.1 == "score")
            #expect(messages.first?.3 == true)
            #expect(messages.last?.0 == (try overriding.string("msg_id")))
            #expect(messages.last?.1 == "score")
            #expect(messages.last?.2 == "score")
            // Both override_msg_id and replace: one or the other.
            let both = try await api.send(
                .post,
                "/v3/push",
                auth: app.auth,
                json:
                    #"{"audience": "all", "notification": {"alert": "v3"}, "options": {"override_msg_id": "\#(try first.string("msg_id"))", "replace": "score"}}"#
            )
            #expect(both.status == 400)
            #expect(both.errorCode == HeraldError.Code.invalidField.rawValue)
        }
    }
}

/// One file of `Tests/Fixtures/jpush/push/`: a JPush body and the answer Herald gives it.
struct JPushFixture: Sendable, CustomStringConvertible {
    var name: String
    var request: String
    var status: Int
    var warnings: Set<String>
    var sendno: String?
    /// The audience size a validation answers, when the fixture says (else any above 0).
    var audienceSize: Int?
    var error: HeraldError.Code?
    var messageContains: String?

    var description: String { name }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/jpush/push")

    static func all() throws -> [JPushFixture] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
        return try names.map { name in
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                let request = object["request"], let expect = object["expect"] as? [String: Any], let status = expect["status"] as? Int
            else { throw ReplyError("\(name): not a fixture") }
            let errorName = expect["error"] as? String
            let error = errorName.flatMap { name in HeraldError.Code.allCases.first { $0.name == name } }
            if errorName != nil, error == nil { throw ReplyError("\(name): no error code named \(errorName ?? "")") }
            return JPushFixture(
                name: name,
                request: String(
                    decoding: try JSONSerialization.data(withJSONObject: request, options: [.sortedKeys, .withoutEscapingSlashes]),
                    as: UTF8.self
                ),
                status: status,
                warnings: Set(expect["warnings"] as? [String] ?? []),
                sendno: expect["sendno"] as? String,
                audienceSize: expect["audience_size"] as? Int,
                error: error,
                messageContains: expect["message_contains"] as? String
            )
        }
    }

    func body(replacing placeholders: [String: String]) -> String {
        placeholders.reduce(request) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
    }

    /// Checks an answer of `POST /v3/push` or of `POST /v3/push/validate`.
    func check(_ reply: Reply, validation: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let route = validation ? "validate" : "push"
        #expect(reply.status == status, "\(name) (\(route)): \(reply.body)", sourceLocation: sourceLocation)
        if let error {
            #expect(reply.errorCode == error.rawValue, "\(name) (\(route)): \(reply.body)", sourceLocation: sourceLocation)
            if let messageContains {
                #expect(reply.errorMessage?.contains(messageContains) == true, "\(name) (\(route)): \(reply.body)", sourceLocation: sourceLocation)
            }
            return
        }
        guard reply.status == 200 else { return }
        let json = try reply.json
        let warnings = json["warnings"] as? [String] ?? []
        // Each warning starts with its field; the answer has none when there are none.
        #expect(
            Set(warnings.map { String($0.prefix { $0 != ":" }) }) == self.warnings,
            "\(name) (\(route)): \(reply.body)",
            sourceLocation: sourceLocation
        )
        #expect(warnings.count == self.warnings.count, "\(name) (\(route)): \(reply.body)", sourceLocation: sourceLocation)
        #expect((json["warnings"] == nil) == self.warnings.isEmpty, "\(name) (\(route)): \(reply.body)", sourceLocation: sourceLocation)
        #expect(json["sendno"] is String, "\(name) (\(route)): \(reply.body)", sourceLocation: sourceLocation)
        if let sendno { #expect(json["sendno"] as? String == sendno, "\(name) (\(route)): \(reply.body)", sourceLocation: sourceLocation) }
        let msgID = json["msg_id"] as? String
        if validation {
            #expect(msgID == "0", "\(name) (validate): \(reply.body)", sourceLocation: sourceLocation)
            let size = json["audience_size"] as? Int ?? -1
            #expect(audienceSize.map { size == $0 } ?? (size > 0), "\(name) (validate): \(reply.body)", sourceLocation: sourceLocation)
        } else {
            #expect(msgID?.isEmpty == false && msgID != "0", "\(name) (push): \(reply.body)", sourceLocation: sourceLocation)
        }
    }
}
