import Foundation
import HeraldCore
import HeraldFCMSandbox
import HeraldKit
import HeraldNode
import HeraldNodeTesting
import HeraldTestSupport
import NIOCore
import Testing

/// FCM end to end: a node routed to a local FCM sandbox, an app with a service account
/// uploaded through the API, Android devices registered with FCM tokens.
@Suite struct FCMDeliveryTests {
    /// Runs a node whose FCM traffic goes to a fresh sandbox, with the test app's service
    /// account uploaded.
    func withFCM(_ body: @Sendable @escaping (TestNode, FCMSandbox, FCMServiceAccount) async throws -> Void) async throws {
        let sandbox = try await FCMSandbox.start()
        let routed: @Sendable (inout HeraldNodeConfiguration) -> Void = { $0.fcm = .localSandbox(sandbox) }
        do {
            try await TestNode.run(configure: routed) { test in
                let (file, account) = try FCMSandbox.keyFile(project: "herald-shop")
                let stored = try await test.call(
                    "PUT",
                    "/admin/v1/apps/\(test.appKey)/fcm",
                    try JSONDecoder().decode(JSON.self, from: file),
                    as: .admin
                )
                #expect(stored.status == 200)
                #expect(stored.json["project_id"].string == "herald-shop")
                #expect(stored.json["status"].string == "ok")
                #expect(stored.json["private_key"].isNull)
                try await body(test, sandbox, account)
            }
        } catch {
            await sandbox.shutdown()
            throw error
        }
        await sandbox.shutdown()
    }

    /// Registers an Android device with an FCM token, as the Android SDK would.
    func android(_ test: TestNode, token: String, alias: String) async throws -> DeviceCredentials {
        let answer = try await test.call(
            "POST",
            "/v3/devices",
            ["app_key": JSON(test.appKey), "platform": "android", "fcm_token": JSON(token)],
            as: .anonymous
        )
        #expect(answer.status == 201 || answer.status == 200)
        let credentials = DeviceCredentials(
            registrationID: try #require(answer.json["registration_id"].string),
            deviceSecret: try #require(answer.json["device_secret"].string)
        )
        let set = try await test.call("POST", "/v3/devices/\(credentials.registrationID)", ["tags": ["add": [JSON(alias)]], "alias": JSON(alias)])
        #expect(set.status == 200)
        return credentials
    }

    func token(_ n: Int) -> String { "dGVzdA:APA91b\(n)" + String(repeating: "Q", count: 120) }

    func waitFor(_ what: String, timeout: Duration = .seconds(15), _ condition: @Sendable () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw TestFailure("waited \(timeout) for \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// An Android device that is not connected gets the push through FCM, rendered from
    /// its JPush fields; one that is connected gets it over MQTT and never through FCM too.
    @Test func offlineThroughFCMOnlineOverMQTTNeverBoth() async throws {
        try await withFCM { test, sandbox, _ in
            try await test.recordEvents()
            let offline = try await android(test, token: token(1), alias: "offline")
            let online = try await android(test, token: token(2), alias: "online")
            try await test.online(online) { reader in
                let push = try await test.push([
                    "platform": "android",
                    "audience": ["alias": ["offline", "online"]],
                    "notification": ["android": ["alert": "Your order shipped", "title": "Shop", "extras": ["order": 42]]],
                    "options": ["time_to_live": 600, "identifier": "order-42"],
                ])
                #expect(push.status == 200)
                #expect(try await reader.next(where: { if case .notification = $0 { true } else { false } }) != nil)
                #expect(try await test.status(push.msgID, offline.registrationID, becomes: "sent_fcm") == "sent_fcm")
                #expect(try await test.status(push.msgID, online.registrationID, becomes: "delivered_tcp") == "delivered_tcp")
                let received = sandbox.received
                #expect(received.count == 1)
                let message = try #require(received.first)
                #expect(message.token == token(1))
                #expect(message.project == "herald-shop")
                #expect(message.message["notification"]?["title"]?.string == "Shop")
                #expect(message.message["notification"]?["body"]?.string == "Your order shipped")
                #expect(message.message["android"]?["collapse_key"]?.string == "order-42")
                #expect(message.message["android"]?["notification"]?["tag"]?.string == "order-42")
                #expect(message.message["data"]?["order"]?.string == "42")
                #expect(message.message["data"]?["msg_id"]?.string == push.msgID)
                let report = try await test.settledReport(push.msgID)
                #expect(report["fcm_sent"].int == 1)
                #expect(report["tcp_delivered"].int == 1)
                let timeline = try await test.timeline(push.msgID, offline.registrationID, until: "sent_fcm").json["timeline"].array ?? []
                #expect(timeline.contains { $0["type"].string == "sent_fcm" && $0["data"]["channel"].string == "fcm" })
                // JPush's received detail counts it as sent through the vendor channel.
                let detail = try await test.call("GET", "/v3/received/detail?msg_ids=\(push.msgID)")
                #expect(detail.json[0]["android_pns_sent"].int == 1)
            }
        }
    }

    /// A copy FCM took, opened on the device (which reports it over its connection later),
    /// gets its `opened` event after `sent_fcm`, as an APNs copy does after `sent_apns`.
    @Test func anOpenedFCMCopyIsLoggedAfterItsSend() async throws {
        try await withFCM { test, _, _ in
            try await test.recordEvents()
            let device = try await android(test, token: token(7), alias: "opener")
            let push = try await test.push(["platform": "android", "audience": ["alias": ["opener"]], "notification": ["alert": "Sale"]])
            #expect(try await test.status(push.msgID, device.registrationID, becomes: "sent_fcm") == "sent_fcm")
            let connection = try await test.rawConnection(device)
            var opened = ByteBuffer()
            opened.writeString(#"{"event": "opened", "msg_id": "\#(push.msgID)"}"#)
            try await connection.send(.publish(.init(topic: "herald/\(device.registrationID)/events", payload: opened)))
            let answer = try await test.timeline(push.msgID, device.registrationID, until: "opened")
            let types = (answer.json["timeline"].array ?? []).map { $0["type"].string ?? "" }
            // The connection also replays the inbox's copy (`sent_tcp`; the SDK shows it
            // once), before or after the report: only the order of the two matters.
            let sent = types.firstIndex(of: "sent_fcm")
            let openedAt = types.firstIndex(of: "opened")
            #expect(sent != nil && openedAt != nil && sent! < openedAt!, "\(types)")
            await connection.close()
        }
    }

    /// A recall reaches an Android device that got the push through FCM as a data command
    /// its SDK executes (the identifiers to withdraw), once.
    @Test func aRecallGoesToFCMAsADataCommand() async throws {
        try await withFCM { test, sandbox, _ in
            let device = try await android(test, token: token(6), alias: "reader")
            let push = try await test.push([
                "platform": "android", "audience": ["alias": ["reader"]], "notification": ["alert": "wrong headline"],
                "options": ["identifier": "headline-1"],
            ])
            #expect(try await test.status(push.msgID, device.registrationID, becomes: "sent_fcm") == "sent_fcm")
            #expect(try await test.call("POST", "/v3/push/recall", ["identifiers": ["headline-1"]]).status == 200)
            try await waitFor("the recall command to reach FCM") { sandbox.receivedCount == 2 }
            let command = try #require(sandbox.received.last)
            #expect(command.token == token(6))
            #expect(command.message["notification"] == nil)
            #expect(command.message["data"]?["herald_type"]?.string == "recall")
            #expect(command.message["data"]?["identifiers"]?.string == #"["headline-1"]"#)
            #expect(command.message["android"]?["priority"]?.string == "NORMAL")
            try await Task.sleep(for: .milliseconds(300))
            #expect(sandbox.receivedCount == 2)
        }
    }

    /// UNREGISTERED: the token is removed from its device, with a `token_invalidated`
    /// event, and never used again: the next push leaves the copy in the inbox.
    @Test func anUnregisteredTokenIsRemovedAndNeverUsedAgain() async throws {
        try await withFCM { test, sandbox, _ in
            try await test.recordEvents()
            let device = try await android(test, token: token(3), alias: "gone")
            sandbox.unregister(token(3))
            let first = try await test.push(["platform": "android", "audience": ["alias": ["gone"]], "notification": ["alert": "one"]])
            #expect(try await test.status(first.msgID, device.registrationID, becomes: "failed") == "failed")
            let answer = try await test.call("GET", "/v3/devices/\(device.registrationID)")
            #expect(answer.json["fcm_token"].isNull)
            let timeline = try await test.timeline(first.msgID, device.registrationID, until: "token_invalidated").json["timeline"].array ?? []
            #expect(timeline.contains { $0["type"].string == "token_invalidated" && $0["data"]["token"].string == "fcm" })
            #expect(timeline.contains { $0["type"].string == "failed" && $0["data"]["channel"].string == "fcm" })
            let attempts = sandbox.receivedCount
            let second = try await test.push(["platform": "android", "audience": ["alias": ["gone"]], "notification": ["alert": "two"]])
            #expect(try await test.status(second.msgID, device.registrationID, becomes: "waiting") == "waiting")
            #expect(sandbox.receivedCount == attempts)
        }
    }

    /// A 429 with Retry-After: the copy waits at least that long (and at least a minute,
    /// FCM's floor for QUOTA_EXCEEDED) before it is sent again; a 503's Retry-After of a
    /// second is honoured, then the copy goes.
    @Test func retryAfterIsHonoured() async throws {
        try await withFCM { test, sandbox, _ in
            let device = try await android(test, token: token(4), alias: "busy")
            sandbox.inject([.quotaExceeded(retryAfter: "90")])
            let before = Date()
            let quota = try await test.push(["platform": "android", "audience": ["alias": ["busy"]], "notification": ["alert": "later"]])
            try await waitFor("the copy to wait for its retry") {
                try await test.count(
                    "deliveries dl JOIN messages m ON m.id = dl.message_id WHERE m.msg_id = '\(quota.msgID)' AND dl.state = 'waiting' AND dl.next_attempt_at IS NOT NULL"
                ) == 1
            }
            let rows = try await test.stores.sql.query(
                "SELECT extract(epoch FROM dl.next_attempt_at)::float8, dl.apns_reason FROM deliveries dl JOIN messages m ON m.id = dl.message_id WHERE m.msg_id = \(quota.msgID)",
                logger: TestDatabase.logger
            )
            for try await (next, reason) in rows.decode((Double, String?).self) {
                #expect(next >= before.timeIntervalSince1970 + 89)
                #expect(reason == "QUOTA_EXCEEDED")
            }
            #expect(sandbox.receivedCount == 0)

            #expect(try await test.status(quota.msgID, device.registrationID) == "waiting")
            let other = try await android(test, token: token(5), alias: "flaky")
            sandbox.inject([.unavailable(retryAfter: "1")])
            let started = ContinuousClock.now
            let flaky = try await test.push(["platform": "android", "audience": ["alias": ["flaky"]], "notification": ["alert": "soon"]])
            #expect(try await test.status(flaky.msgID, other.registrationID, becomes: "sent_fcm", timeout: .seconds(20)) == "sent_fcm")
            #expect(ContinuousClock.now - started >= .seconds(1))
            #expect(sandbox.received.map(\.token) == [token(5)])
        }
    }

    /// Credentials the token endpoint refuses stop FCM at the first refusal: one exchange
    /// refused, no message sent, the app's FCM status says why, and later pushes don't ask
    /// again; new credentials put FCM back.
    @Test func refusedCredentialsStopAtTheFirstRefusal() async throws {
        try await withFCM { test, sandbox, account in
            for n in 10..<15 { _ = try await android(test, token: token(n), alias: "fleet") }
            sandbox.refuse(clientEmail: account.clientEmail, reason: "Invalid grant: account not found")
            sandbox.expireAccessTokens()
            let asked = sandbox.tokenRequests
            let push = try await test.push(["platform": "android", "audience": ["alias": ["fleet"]], "notification": ["alert": "x"]])
            try await waitFor("the app's FCM credentials to be marked broken") {
                try await test.call("GET", "/admin/v1/apps/\(test.appKey)/fcm", as: .admin).json["status"].string == "broken"
            }
            let status = try await test.call("GET", "/admin/v1/apps/\(test.appKey)/fcm", as: .admin)
            #expect(status.json["problem"].string?.contains("account not found") == true)
            _ = try await test.settledReport(push.msgID)
            #expect(sandbox.tokenRequests == asked + 1)
            #expect(sandbox.receivedCount == 0)
            let again = try await test.push(["platform": "android", "audience": ["alias": ["fleet"]], "notification": ["alert": "y"]])
            _ = try await test.settledReport(again.msgID)
            #expect(sandbox.tokenRequests == asked + 1)
            #expect(sandbox.receivedCount == 0)

            let (file, _) = try FCMSandbox.keyFile(project: "herald-shop")
            #expect(
                try await test.call("PUT", "/admin/v1/apps/\(test.appKey)/fcm", try JSONDecoder().decode(JSON.self, from: file), as: .admin).status
                    == 200
            )
            let third = try await test.push(["platform": "android", "audience": ["alias": ["fleet"]], "notification": ["alert": "z"]])
            let report = try await test.settledReport(third.msgID) { $0["fcm_sent"].int == 5 }
            #expect(report["fcm_sent"].int == 5)
        }
    }

    /// A service account that is malformed, for another project, whose key can't sign, or
    /// that the token endpoint refuses is refused at upload, and nothing is stored.
    @Test func aBadServiceAccountIsRefusedAtUpload() async throws {
        let sandbox = try await FCMSandbox.start()
        defer { Task { await sandbox.shutdown() } }
        let routed: @Sendable (inout HeraldNodeConfiguration) -> Void = { $0.fcm = .localSandbox(sandbox) }
        try await TestNode.run(configure: routed) { test in
            let path = "/admin/v1/apps/\(test.appKey)/fcm"
            let (file, account) = try FCMSandbox.keyFile(project: "herald-shop")
            let object = try #require(try JSONDecoder().decode(JSON.self, from: file).object)
            func refused(_ body: JSON, _ field: String) async throws {
                let answer = try await test.call("PUT", path, body, as: .admin)
                #expect(answer.status == 422, "\(field)")
                #expect(answer.error == 9302)
                #expect(answer.json["error"]["message"].string?.hasPrefix(field) == true, "\(answer.json)")
            }
            try await refused(["service_account": .object(object), "project_id": "another-shop"], "project_id")
            var malformed = object
            malformed["type"] = "authorized_user"
            try await refused(.object(malformed), "type")
            malformed = object
            malformed["private_key"] = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"
            try await refused(.object(malformed), "private_key")
            malformed = object
            malformed.removeValue(forKey: "client_email")
            try await refused(.object(malformed), "client_email")
            // The token endpoint refuses it.
            sandbox.refuse(clientEmail: account.clientEmail)
            try await refused(.object(object), "service_account")
            let notJSON = try await test.call("PUT", path, "not a key file", as: .admin)
            #expect(notJSON.status == 400)
            #expect(try await test.call("GET", path, as: .admin).error == 9111)
            #expect(try await test.count("apps WHERE fcm_credentials IS NOT NULL") == 0)
        }
    }
}
