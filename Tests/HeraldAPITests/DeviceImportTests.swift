import Foundation
import HTTPTypes
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

/// `POST /admin/v1/apps/{app_key}/devices/import`.
@Suite struct DeviceImportTests {
    static let iosToken = String(repeating: "ab", count: 32)

    @Test func anNDJSONFileCreatesItsDevicesWithTagsAliasesAndTokens() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let file = """
                {"registration_id": "1a1018970a8ae1e8f84", "platform": "ios", "apns_token": "\(Self.iosToken)", "apns_environment": "sandbox", "alias": "alice", "tags": ["vip", "beta", "vip"], "mobile": "+8613800138000"}
                {"registration_id": "0900e8d85ef", "alias": "alice", "tags": ["beta"]}

                {"registration_id": "1a1018970a8ae1e8f85", "voip_token": "\(String(repeating: "cd", count: 32))"}
                """
            let reply = try await api.importDevices(app, file, as: "application/x-ndjson")
            #expect(reply.status == 200)
            #expect(try reply.counts == ["rows": 3, "created": 3, "updated": 0, "unchanged": 0, "rejected": 0])

            let first = try await api.send(.get, "/v3/devices/1a1018970a8ae1e8f84", auth: app.auth)
            #expect(try first.string("platform") == "ios")
            #expect(try first.string("apns_token") == Self.iosToken)
            #expect(try first.string("apns_environment") == "sandbox")
            #expect(try first.string("alias") == "alice")
            #expect(try first.strings("tags") == ["beta", "vip"])
            #expect(try first.string("mobile") == "+8613800138000")
            // No platform: the JPush id's third character says Android (0) or iOS (1), a token says iOS.
            #expect(try await api.send(.get, "/v3/devices/0900e8d85ef", auth: app.auth).string("platform") == "android")
            #expect(try await api.send(.get, "/v3/devices/1a1018970a8ae1e8f85", auth: app.auth).string("platform") == "ios")
            let alias = try await api.send(.get, "/v3/aliases/alice", auth: app.auth)
            #expect(alias.body.contains("0900e8d85ef") && alias.body.contains("1a1018970a8ae1e8f84"))
            let rows = try await api.store.sql.query("SELECT mobile, secret_hash IS NULL FROM devices WHERE registration_id = '1a1018970a8ae1e8f84'")
            for try await (mobile, noSecret) in rows.decode((String?, Bool).self) {
                #expect(mobile == "+8613800138000")
                #expect(noSecret)
            }
        }
    }

    @Test func aCSVFileWithAHeaderRowIsImported() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            // A spreadsheet's CSV: byte order mark, CRLF, quoted cells, columns in any order.
            let file =
                "\u{FEFF}tags,registration_id,platform,alias,apns_token\r\n"
                + "\"vip,beta\",1a1018970a8ae1e8f84,ios,\"bob \"\"the\"\" builder\",\(Self.iosToken)\r\n"
                + ",0a04ad7d8b4,android,,\r\n"
            let reply = try await api.importDevices(app, file, as: "text/csv; charset=utf-8")
            #expect(reply.status == 200)
            #expect(try reply.counts == ["rows": 2, "created": 2, "updated": 0, "unchanged": 0, "rejected": 0])
            let device = try await api.send(.get, "/v3/devices/1a1018970a8ae1e8f84", auth: app.auth)
            #expect(try device.strings("tags") == ["beta", "vip"])
            #expect(try device.string("alias") == #"bob "the" builder"#)
            #expect(try await api.send(.get, "/v3/devices/0a04ad7d8b4", auth: app.auth).status == 200)
        }
    }

    @Test func badRowsAreRejectedWithTheirLineNumbersAndTheOthersImported() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let other = try await api.createApp("Other")
            _ = try await api.importDevices(other, #"{"registration_id": "13065ffa4e0c9f3f2f0"}"#, as: "application/x-ndjson")
            let file = """
                {"registration_id": "1a1018970a8ae1e8f84"}
                {"registration_id": "1A1018970A8AE1E8F84"}
                {"registration_id": "1a1018970a8ae1e8f86", "platform": "symbian"}
                not json at all
                {"registration_id": "1a1018970a8ae1e8f87", "alias": "\(String(repeating: "x", count: 41))"}
                {"registration_id": "0a1018970a8ae1e8f88", "apns_token": "zz"}
                {"registration_id": "0a1018970a8ae1e8f89", "platform": "android", "apns_token": "\(Self.iosToken)"}
                {"registration_id": "1a1018970a8ae1e8f90", "colour": "red"}
                {"registration_id": "13065ffa4e0c9f3f2f0"}
                {"platform": "ios"}
                {"registration_id": "1a1018970a8ae1e8f91", "apns_token": "\(Self.iosToken)"}
                {"registration_id": "1a1018970a8ae1e8f92", "apns_token": "\(Self.iosToken)"}
                {"registration_id": "1a1018970a8ae1e8f93", "tags": "vip"}
                {"registration_id": "1a2018970a8ae1e8f94"}
                """
            let reply = try await api.importDevices(app, file, as: "application/x-ndjson")
            #expect(reply.status == 200)
            #expect(try reply.counts == ["rows": 14, "created": 2, "updated": 0, "unchanged": 0, "rejected": 12])
            let rejected = try #require(try reply.json["rejected_rows"] as? [[String: Any]])
            #expect(rejected.compactMap { $0["line"] as? Int } == [2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14])
            let reasons = Dictionary(uniqueKeysWithValues: rejected.map { ($0["line"] as? Int ?? 0, $0["reason"] as? String ?? "") })
            #expect(reasons[2]?.hasPrefix("registration_id: not a registration id") == true)
            #expect(reasons[3]?.hasPrefix("platform:") == true)
            #expect(reasons[4] == "line: not valid JSON")
            #expect(reasons[5]?.hasPrefix("alias: at most 40 bytes") == true)
            #expect(reasons[6]?.hasPrefix("apns_token:") == true)
            #expect(reasons[7] == "apns_token: only Apple platforms have APNs tokens")
            #expect(reasons[8]?.contains("colour: unknown field") == true)
            #expect(reasons[9] == "registration_id: belongs to another app")
            #expect(reasons[10] == "registration_id: is required")
            #expect(reasons[12] == "apns_token: also on an earlier row of the file")
            #expect(reasons[13] == "tags: wrong type")
            #expect(reasons[14]?.hasPrefix("platform: is required") == true)
            #expect(rejected.first { $0["line"] as? Int == 9 }?["registration_id"] as? String == "13065ffa4e0c9f3f2f0")
            #expect(try reply.json["rejected_rows_truncated"] as? Bool == false)
            #expect(try await api.devices() == ["13065ffa4e0c9f3f2f0", "1a1018970a8ae1e8f84", "1a1018970a8ae1e8f91"])
        }
    }

    @Test func sendingTheFileAgainOrItsRestChangesNothingTwice() async throws {
        try await APITest.live { configuration, _ in
            configuration.importBatchSize = 3
        } _: { api, _ in
            let app = try await api.createApp()
            let lines = (0..<10).map { n in
                #"{"registration_id": "1a10189700000000\#(String(format: "%03x", n))", "alias": "a\#(n % 3)", "tags": ["t\#(n % 4)", "all"]}"#
            }
            // The first half arrives, then the connection breaks; the whole file is sent again.
            let half = try await api.importDevices(app, lines.prefix(5).joined(separator: "\n"), as: "application/x-ndjson")
            #expect(try half.counts == ["rows": 5, "created": 5, "updated": 0, "unchanged": 0, "rejected": 0])
            let whole = try await api.importDevices(app, lines.joined(separator: "\n"), as: "application/x-ndjson")
            #expect(try whole.counts == ["rows": 10, "created": 5, "updated": 0, "unchanged": 5, "rejected": 0])
            let again = try await api.importDevices(app, lines.joined(separator: "\n"), as: "application/x-ndjson")
            #expect(try again.counts == ["rows": 10, "created": 0, "updated": 0, "unchanged": 10, "rejected": 0])
            #expect(try await api.count("devices") == 10)
            #expect(try await api.count("device_tags") == 20)

            // A device named twice in one file: the later row updates it.
            let twice = """
                {"registration_id": "1a101897000000000aa", "alias": "first"}
                {"registration_id": "1a101897000000000aa", "alias": "second", "tags": ["late"]}
                """
            let reply = try await api.importDevices(app, twice, as: "application/x-ndjson")
            #expect(try reply.counts == ["rows": 2, "created": 1, "updated": 1, "unchanged": 0, "rejected": 0])
            let device = try await api.send(.get, "/v3/devices/1a101897000000000aa", auth: app.auth)
            #expect(try device.string("alias") == "second")
            #expect(try device.strings("tags") == ["late"])
        }
    }

    @Test func aDeviceImportedAgainTakesWhatTheRowStatesAndLosesNothing() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let rid = "1a1018970a8ae1e8f84"
            _ = try await api.importDevices(
                app,
                #"{"registration_id": "\#(rid)", "alias": "old", "tags": ["a"], "apns_token": "\#(Self.iosToken)"}"#,
                as: "application/x-ndjson"
            )
            // Changed through the API since: a tag of its own.
            #expect(try await api.send(.post, "/v3/devices/\(rid)", auth: app.auth, json: #"{"tags": {"add": ["api"]}}"#).status == 200)
            let reply = try await api.importDevices(
                app,
                #"{"registration_id": "\#(rid)", "alias": "new", "tags": ["b"]}"#,
                as: "application/x-ndjson"
            )
            #expect(try reply.counts == ["rows": 1, "created": 0, "updated": 1, "unchanged": 0, "rejected": 0])
            let device = try await api.send(.get, "/v3/devices/\(rid)", auth: app.auth)
            #expect(try device.string("alias") == "new")
            #expect(try device.strings("tags") == ["a", "api", "b"])
            #expect(try device.string("apns_token") == Self.iosToken)
        }
    }

    @Test func theAliasAndTagLimitsHoldAcrossRowsBatchesAndTheAPI() async throws {
        try await APITest.live { configuration, _ in
            configuration.importBatchSize = 4
        } _: { api, _ in
            let app = try await api.createApp()
            // Two devices already have the alias; 12 rows want it: 8 places are left.
            for _ in 0..<2 {
                let device = try await api.registerDevice(app)
                #expect(
                    try await api.send(.post, "/v3/devices/\(device.registrationID)", auth: app.auth, json: #"{"alias": "shared"}"#).status == 200
                )
            }
            let rows = (1...12).map { n in #"{"registration_id": "0a10189700000000\#(String(format: "%03x", n))", "alias": "shared"}"# }
            let reply = try await api.importDevices(app, rows.joined(separator: "\n"), as: "application/x-ndjson")
            #expect(try reply.counts == ["rows": 12, "created": 8, "updated": 0, "unchanged": 0, "rejected": 4])
            let rejected = try #require(try reply.json["rejected_rows"] as? [[String: Any]])
            #expect(rejected.compactMap { $0["line"] as? Int } == [9, 10, 11, 12])
            #expect(rejected.allSatisfy { ($0["reason"] as? String)?.hasPrefix("alias: an alias may be set on at most 10") == true })
            #expect(try await api.count("devices WHERE alias = 'shared'") == 10)
            // Re-importing a device that holds one of the places keeps it.
            let again = try await api.importDevices(app, rows[0], as: "application/x-ndjson")
            #expect(try again.counts == ["rows": 1, "created": 0, "updated": 0, "unchanged": 1, "rejected": 0])

            // Tags: 1,001 on one row is over the limit; 999 held plus 2 new is too.
            let many = (0..<1001).map { #""t\#($0)""# }.joined(separator: ",")
            let tooMany = try await api.importDevices(
                app,
                #"{"registration_id": "0a1018970a8ae1e8fff", "tags": [\#(many)]}"#,
                as: "application/x-ndjson"
            )
            #expect(try tooMany.counts["rejected"] == 1)
            let held = (0..<999).map { #""t\#($0)""# }.joined(separator: ",")
            let rid = "0a1018970a8ae1e8ffe"
            #expect(
                try await api.importDevices(app, #"{"registration_id": "\#(rid)", "tags": [\#(held)]}"#, as: "application/x-ndjson").counts["created"]
                    == 1
            )
            let over = try await api.importDevices(app, #"{"registration_id": "\#(rid)", "tags": ["t1", "n1", "n2"]}"#, as: "application/x-ndjson")
            #expect(try over.counts == ["rows": 1, "created": 0, "updated": 0, "unchanged": 0, "rejected": 1])
            #expect(over.body.contains("at most 1000 tags (this row would make 1001)"))
            let fits = try await api.importDevices(app, #"{"registration_id": "\#(rid)", "tags": ["t1", "n1"]}"#, as: "application/x-ndjson")
            #expect(try fits.counts["updated"] == 1)
            #expect(try await api.count("device_tags WHERE tag = 'n2'") == 0)
        }
    }

    @Test func badInputIsRefusedWholeAndChangesNothing() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let valid = #"{"registration_id": "1a1018970a8ae1e8f84"}"#
            let cases: [(body: String, type: String?, status: Int, code: HeraldError.Code)] = [
                (valid, "application/json", 415, .unsupportedMediaType),
                (valid, nil, 415, .unsupportedMediaType),
                ("", "application/x-ndjson", 400, .invalidJSON),
                ("\n  \n", "application/x-ndjson", 400, .invalidJSON),
                ("registration_id,platform\n1a1018970a8ae1e8f84,ios", "application/x-ndjson", 400, .invalidJSON),
                ("[1, 2]\n" + valid, "application/x-ndjson", 400, .invalidJSON),
                ("1a1018970a8ae1e8f84,ios\n", "text/csv", 400, .invalidField),
                ("rid,platform\n1a1018970a8ae1e8f84,ios\n", "text/csv", 400, .invalidField),
                ("platform,alias\nios,bob\n", "text/csv", 400, .invalidField),
                ("registration_id,alias,alias\n1a1018970a8ae1e8f84,a,b\n", "text/csv", 400, .invalidField),
                ("", "text/csv", 400, .invalidField),
            ]
            for (body, type, status, code) in cases {
                var headers: HTTPFields = [:]
                headers[.contentType] = type
                let reply = try await api.send(.post, "/admin/v1/apps/\(app.appKey)/devices/import", auth: .admin, json: body, headers: headers)
                #expect(reply.status == status, "\(body)")
                #expect(reply.errorCode == code.rawValue, "\(body): \(reply.body)")
            }
            #expect(try await api.count("devices") == 0)
            // The admin token, for an app that exists.
            let wrongAuth = try await api.importDevices(app, valid, as: "application/x-ndjson", auth: app.auth)
            #expect(wrongAuth.status == 401)
            let noApp = try await api.importDevices(
                TestApp(appKey: String(repeating: "0", count: 24), masterSecret: ""),
                valid,
                as: "application/x-ndjson"
            )
            #expect(noApp.errorCode == HeraldError.Code.appNotFound.rawValue)
            #expect(try await api.count("devices") == 0)
        }
    }

    @Test func anImportedDeviceClaimsItsRegistrationOnceAndThenProvesIt() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let rid = "1a1018970a8ae1e8f84"
            _ = try await api.importDevices(app, #"{"registration_id": "\#(rid)", "tags": ["vip"], "alias": "ann"}"#, as: "application/x-ndjson")
            // Nothing authenticates as the device before it is claimed.
            #expect(try await api.send(.get, "/v3/devices/\(rid)", auth: .basic(rid, "")).status == 401)
            let claim = try await api.send(
                .post,
                "/v3/devices",
                auth: .basic(rid, ""),
                json: #"{"app_key": "\#(app.appKey)", "platform": "ios", "apns_token": "\#(Self.iosToken)"}"#
            )
            #expect(claim.status == 200)
            #expect(try claim.string("registration_id") == rid)
            let secret = try claim.string("device_secret")
            let device = try await api.send(.get, "/v3/devices/\(rid)", auth: .basic(rid, secret))
            #expect(try device.strings("tags") == ["vip"])
            #expect(try device.string("alias") == "ann")
            #expect(try device.string("apns_token") == Self.iosToken)
            // Claimed once: an empty secret no longer proves it, and a re-import keeps the secret.
            let second = try await api.send(.post, "/v3/devices", auth: .basic(rid, ""), json: #"{"app_key": "\#(app.appKey)", "platform": "ios"}"#)
            #expect(second.status == 401)
            _ = try await api.importDevices(app, #"{"registration_id": "\#(rid)", "alias": "ann"}"#, as: "application/x-ndjson")
            #expect(try await api.send(.get, "/v3/devices/\(rid)", auth: .basic(rid, secret)).status == 200)
        }
    }
}

extension APITest {
    /// `POST /admin/v1/apps/{app_key}/devices/import` with `body` as `contentType`.
    func importDevices(_ app: TestApp, _ body: String, as contentType: String, auth: Auth = .admin) async throws -> Reply {
        var headers: HTTPFields = [:]
        headers[.contentType] = contentType
        return try await send(.post, "/admin/v1/apps/\(app.appKey)/devices/import", auth: auth, json: body, headers: headers)
    }

    /// Every registration id in the database, in order.
    func devices() async throws -> [String] {
        let rows = try await store.sql.query("SELECT registration_id FROM devices ORDER BY registration_id")
        var ids: [String] = []
        for try await id in rows.decode(String.self) { ids.append(id) }
        return ids
    }

    /// Rows of `tableAndFilter` (a table, optionally with a WHERE clause).
    func count(_ tableAndFilter: String) async throws -> Int {
        let rows = try await store.sql.query(PostgresQuery(unsafeSQL: "SELECT count(*)::bigint FROM \(tableAndFilter)"))
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}

extension Reply {
    /// The counts of an import's answer.
    var counts: [String: Int] {
        get throws {
            let json = try json
            var counts: [String: Int] = [:]
            for key in ["rows", "created", "updated", "unchanged", "rejected"] { counts[key] = json[key] as? Int }
            return counts
        }
    }
}
