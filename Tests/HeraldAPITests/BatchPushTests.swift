import Foundation
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

/// JPush's batch single push: each entry a push of its own, answered under its cid; bad
/// entries fail alone; cids make a batch safe to retry; a full batch costs a few commits.
@Suite struct BatchPushTests {
    static let regid = "/v3/push/batch/regid/single"
    static let alias = "/v3/push/batch/alias/single"

    /// `{"pushlist": {...}}` from entries written as JSON text.
    static func body(_ entries: [String: String]) -> String {
        #"{"pushlist": {"# + entries.map { #""\#($0.key)": \#($0.value)"# }.joined(separator: ",") + "}}"
    }

    /// An entry for `target` with its own text.
    static func entry(_ target: String, _ text: String, options: String? = nil) -> String {
        #"{"target": "\#(target)", "notification": {"alert": "\#(text)"}"# + (options.map { #", "options": \#($0)"# } ?? "") + "}"
    }

    /// Each entry's answer: cid → (msg_id, error code).
    static func answers(_ reply: Reply) throws -> [String: (msgID: String?, error: Int?)] {
        try reply.json.mapValues { value in
            let object = value as? [String: Any] ?? [:]
            return (object["msg_id"] as? String, (object["error"] as? [String: Any])?["code"] as? Int)
        }
    }

    @Test func eachEntryIsAPushOfItsOwnAndABadEntryFailsOnlyItself() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let one = try await api.registerDevice(app)
            let two = try await api.registerDevice(app)
            let reply = try await api.send(
                .post,
                Self.regid,
                auth: app.auth,
                json: Self.body([
                    "cid-one": Self.entry(one.registrationID, "for one"),
                    "cid-two": Self.entry(two.registrationID, "for two", options: #"{"time_to_live": 60}"#),
                    "cid-nobody": Self.entry(unknownRegistrationID(), "for nobody"),
                    "cid-bad-field": #"{"target": "\#(one.registrationID)", "notification": {"alert": "x"}, "options": {"time_to_live": -1}}"#,
                    "cid-unknown-key": #"{"target": "\#(one.registrationID)", "notification": {"alert": "x"}, "optoins": {}}"#,
                    "cid-audience": #"{"target": "\#(one.registrationID)", "audience": "all", "notification": {"alert": "x"}}"#,
                    "cid-no-target": #"{"notification": {"alert": "x"}}"#,
                    "cid-bad-target": Self.entry("not-a-registration-id", "x"),
                    "cid-empty": #"{"target": "\#(one.registrationID)"}"#,
                    "cid-not-object": "[1, 2]",
                ])
            )
            #expect(reply.status == 200, "\(reply.body)")
            let answers = try Self.answers(reply)
            #expect(answers.count == 10)
            let expected: [String: HeraldError.Code] = [
                "cid-nobody": .noAudienceMatch, "cid-bad-field": .invalidField, "cid-unknown-key": .unsupportedKey, "cid-audience": .unsupportedKey,
                "cid-no-target": .missingField, "cid-bad-target": .invalidField, "cid-empty": .missingField, "cid-not-object": .invalidField,
            ]
            for (cid, code) in expected {
                #expect(answers[cid]?.error == code.rawValue, "\(cid): \(reply.body)")
                #expect(answers[cid]?.msgID == nil, "\(cid)")
            }
            let first = try #require(answers["cid-one"]?.msgID)
            let second = try #require(answers["cid-two"]?.msgID)
            // Stored as POST /v3/push stores a push: to its device only, under its cid.
            let rows = try await api.store.sql.query(
                """
                SELECT m.cid, m.request->'audience'->'registration_id'->>0, m.request->'notification'->>'alert', m.time_to_live,
                       (SELECT count(*) FROM push_jobs j WHERE j.message_id = m.id)
                FROM messages m ORDER BY m.cid
                """,
                logger: TestDatabase.logger
            )
            var stored: [[String]] = []
            for try await (cid, target, alert, ttl, jobs) in rows.decode((String?, String?, String?, Int32, Int64).self) {
                stored.append([cid ?? "-", target ?? "-", alert ?? "-", String(ttl), String(jobs)])
            }
            #expect(
                stored == [
                    ["cid-one", one.registrationID, "for one", "86400", "1"],
                    ["cid-two", two.registrationID, "for two", "60", "1"],
                ]
            )
            let ids = try await api.store.sql.query("SELECT msg_id FROM messages ORDER BY cid", logger: TestDatabase.logger)
            var msgIDs: [String] = []
            for try await id in ids.decode(String.self) { msgIDs.append(id) }
            #expect(msgIDs == [first, second])
        }
    }

    @Test func aliasEntriesGoToTheDevicesWithTheAlias() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"alias": "alice"}"#)
            let reply = try await api.send(
                .post,
                Self.alias,
                auth: app.auth,
                json: Self.body(["a": Self.entry("alice", "hi alice"), "b": Self.entry("bob", "hi bob"), "c": Self.entry("", "empty")])
            )
            let answers = try Self.answers(reply)
            #expect(answers["a"]?.msgID != nil, "\(reply.body)")
            #expect(answers["b"]?.error == HeraldError.Code.noAudienceMatch.rawValue)
            #expect(answers["c"]?.error == HeraldError.Code.invalidField.rawValue)
            let rows = try await api.store.sql.query("SELECT request->'audience'->'alias'->>0 FROM messages", logger: TestDatabase.logger)
            var aliases: [String?] = []
            for try await alias in rows.decode(String?.self) { aliases.append(alias) }
            #expect(aliases == ["alice"])
        }
    }

    /// A retried batch answers every cid with its first push and sends nothing again, here
    /// as in `POST /v3/push`; a cid first pushed more than 24 hours ago is a new push.
    @Test func cidsMakeABatchSafeToRetry() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            let single = try await api.send(
                .post,
                "/v3/push",
                auth: app.auth,
                json: #"{"audience": {"registration_id": ["\#(device.registrationID)"]}, "notification": {"alert": "x"}, "cid": "from-push"}"#
            )
            let body = Self.body([
                "r1": Self.entry(device.registrationID, "one"), "r2": Self.entry(device.registrationID, "two"),
                "from-push": Self.entry(device.registrationID, "three"),
            ])
            let first = try Self.answers(try await api.send(.post, Self.regid, auth: app.auth, json: body))
            let again = try Self.answers(try await api.send(.post, Self.regid, auth: app.auth, json: body))
            #expect(first["from-push"]?.msgID == (try single.string("msg_id")))
            for cid in ["r1", "r2", "from-push"] {
                #expect(first[cid]?.msgID != nil)
                #expect(again[cid]?.msgID == first[cid]?.msgID, "\(cid)")
            }
            let pushed = try await Self.count(api, "SELECT count(*) FROM messages")
            #expect(pushed == 3)

            try await api.store.sql.query(
                "UPDATE messages SET created_at = now() - interval '25 hours' WHERE cid = 'r1'",
                logger: TestDatabase.logger
            )
            let later = try Self.answers(try await api.send(.post, Self.regid, auth: app.auth, json: body))
            #expect(later["r1"]?.msgID != nil && later["r1"]?.msgID != first["r1"]?.msgID)
            #expect(later["r2"]?.msgID == first["r2"]?.msgID)
            #expect(try await Self.count(api, "SELECT count(*) FROM messages WHERE cid = 'r1'") == 1)
            #expect(try await Self.count(api, "SELECT count(*) FROM messages") == 4)
        }
    }

    /// Two requests pushing the same cids at once: each cid is stored once, and both
    /// answer with that push.
    @Test func concurrentBatchesWithTheSameCIDsStoreEachOnce() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            let body = Self.body(Dictionary(uniqueKeysWithValues: (0..<50).map { ("same-\($0)", Self.entry(device.registrationID, "n\($0)")) }))
            let replies = try await withThrowingTaskGroup(of: [String: (msgID: String?, error: Int?)].self) { group in
                for _ in 0..<4 { group.addTask { try Self.answers(try await api.send(.post, Self.regid, auth: app.auth, json: body)) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for index in 0..<50 {
                let ids = Set(replies.map { $0["same-\(index)"]?.msgID })
                #expect(ids.count == 1 && ids.first! != nil, "same-\(index): \(ids)")
            }
            #expect(try await Self.count(api, "SELECT count(*) FROM messages") == 50)
        }
    }

    /// A thousand entries are accepted through the group commit: a few transactions, not
    /// one per push (each commit's rows share its transaction id).
    @Test func aFullBatchCostsAFewCommits() async throws {
        try await APITest.run(maxBodySize: 4 << 20) { api in
            let app = try await api.createApp()
            let devices = try await withThrowingTaskGroup(of: TestDevice.self) { group in
                for _ in 0..<10 { group.addTask { try await api.registerDevice(app) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let entries = Dictionary(
                uniqueKeysWithValues: (0..<1000).map { ("bulk-\($0)", Self.entry(devices[$0 % devices.count].registrationID, "n\($0)")) }
            )
            let reply = try await api.send(.post, Self.regid, auth: app.auth, json: Self.body(entries))
            let answers = try Self.answers(reply)
            #expect(answers.count == 1000)
            #expect(Set(answers.values.compactMap(\.msgID)).count == 1000)
            #expect(try await Self.count(api, "SELECT count(*) FROM messages") == 1000)
            #expect(try await Self.count(api, "SELECT count(*) FROM push_jobs") == 1000)
            let commits = try await Self.count(api, "SELECT count(DISTINCT xmin::text) FROM messages")
            #expect(commits <= 10, "\(commits) commits for 1000 pushes")
        }
    }

    @Test func aBodyThatIsNoPushlistIsRefusedWholeAndStoresNothing() async throws {
        try await APITest.run(maxBodySize: 4 << 20) { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            let tooMany = Self.body(Dictionary(uniqueKeysWithValues: (0..<1001).map { ("c\($0)", Self.entry(device.registrationID, "x")) }))
            let cases: [(String, HeraldError.Code)] = [
                (tooMany, .limitExceeded),
                (#"{"pushlist": {}}"#, .invalidField),
                (#"{"pushlist": []}"#, .invalidField),
                ("{}", .missingField),
                (#"{"pushlist": {"a": \#(Self.entry(device.registrationID, "x"))}, "extra": 1}"#, .unsupportedKey),
                ("[]", .invalidJSON),
                ("{not json", .invalidJSON),
            ]
            for (body, code) in cases {
                for path in [Self.regid, Self.alias] {
                    let reply = try await api.send(.post, path, auth: app.auth, json: body)
                    #expect(reply.status == code.httpStatus, "\(body.prefix(60)) → \(reply.body)")
                    #expect(reply.errorCode == code.rawValue, "\(body.prefix(60)) → \(reply.body)")
                }
            }
            let unauthenticated = try await api.send(.post, Self.regid, json: Self.body(["a": Self.entry(device.registrationID, "x")]))
            #expect(unauthenticated.errorCode == HeraldError.Code.unauthorized.rawValue)
            #expect(try await Self.count(api, "SELECT count(*) FROM messages") == 0)
        }
    }

    /// Another app's devices and aliases are no target, and cids are per app.
    @Test func anotherAppsDevicesAreNoTargetAndCIDsArePerApp() async throws {
        try await APITest.run { api in
            let mine = try await api.createApp("Mine")
            let theirs = try await api.createApp("Theirs")
            let theirDevice = try await api.registerDevice(theirs)
            try await api.send(.post, "/v3/devices/\(theirDevice.registrationID)", auth: theirs.auth, json: #"{"alias": "shared"}"#)
            let myDevice = try await api.registerDevice(mine)
            let byID = try Self.answers(
                try await api.send(.post, Self.regid, auth: mine.auth, json: Self.body(["x": Self.entry(theirDevice.registrationID, "x")]))
            )
            #expect(byID["x"]?.error == HeraldError.Code.noAudienceMatch.rawValue)
            let byAlias = try Self.answers(try await api.send(.post, Self.alias, auth: mine.auth, json: Self.body(["x": Self.entry("shared", "x")])))
            #expect(byAlias["x"]?.error == HeraldError.Code.noAudienceMatch.rawValue)
            #expect(try await Self.count(api, "SELECT count(*) FROM messages") == 0)

            let theirs1 = try Self.answers(
                try await api.send(.post, Self.regid, auth: theirs.auth, json: Self.body(["same": Self.entry(theirDevice.registrationID, "t")]))
            )
            let mine1 = try Self.answers(
                try await api.send(.post, Self.regid, auth: mine.auth, json: Self.body(["same": Self.entry(myDevice.registrationID, "m")]))
            )
            #expect(theirs1["same"]?.msgID != nil && mine1["same"]?.msgID != nil && theirs1["same"]?.msgID != mine1["same"]?.msgID)
        }
    }

    /// An entry that replaces an earlier notification is committed alone, with its cid.
    @Test func aReplacingEntryIsAcceptedWithItsCID() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            let body = Self.body(["rep": Self.entry(device.registrationID, "v2", options: #"{"replace": "story"}"#)])
            let first = try Self.answers(try await api.send(.post, Self.regid, auth: app.auth, json: body))
            let again = try Self.answers(try await api.send(.post, Self.regid, auth: app.auth, json: body))
            #expect(first["rep"]?.msgID != nil && again["rep"]?.msgID == first["rep"]?.msgID)
            #expect(try await Self.count(api, "SELECT count(*) FROM messages WHERE cid = 'rep' AND replaces = 'story'") == 1)
        }
    }

    static func count(_ api: APITest, _ sql: String) async throws -> Int {
        let rows = try await api.store.sql.query(PostgresQuery(unsafeSQL: sql), logger: TestDatabase.logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}
