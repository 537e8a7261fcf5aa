import Foundation
import HeraldCore
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// JPush's report views and device presence, made of what really happened to a push: one
/// copy acknowledged over an Android device's connection and opened, one sent to APNs for
/// an iOS device that later reads its inbox, one waiting for a Linux device.
@Suite struct JPushReportTests {
    @Test func theReportViewsCountEachChannelAndStatusesUseJPushsCodes() async throws {
        try await TestNode.run { test in
            let android = try await test.register(platform: "android")
            let token = TestNode.token(71)
            let iphone = try await test.register(token: token)
            let linux = try await test.register(platform: "linux")
            let bystander = try await test.register(platform: "linux")
            let other = try await test.stores.api.createApp(name: "Other")
            let foreign = try await HeraldAPIClient(baseURL: test.apiURL, appKey: other.app.appKey).register(platform: "linux")

            let client = test.client(android)
            let reader = EventReader(client)
            let running = Task { await client.run() }
            defer { running.cancel() }
            _ = try await reader.next(where: { $0 == .connected })
            try await waitUntil("the gateway to register the Android device") { test.gateway.isConnected(android.registrationID) }

            let audience = JSON([android.registrationID, iphone.registrationID, linux.registrationID])
            let sent = try await test.push([
                "audience": ["registration_id": audience], "notification": ["alert": "both"], "message": ["msg_content": "inside"],
            ])
            #expect(sent.status == 200)
            #expect(try await reader.next(where: \.isNotification) != nil)
            try await client.report(.opened(messageID: sent.msgID))
            #expect(try await test.waitForAPNs(token).count == 1)
            _ = try await test.settledReport(sent.msgID) { $0["opened"].int == 1 && $0["apns_sent"].int == 1 }

            let received = try await test.call("GET", "/v3/received?msg_ids=\(sent.msgID)").json[0]
            #expect(received["msg_id"].string == sent.msgID)
            #expect(received["android_received"].int == 1)
            #expect(received["ios_apns_sent"].int == 1)
            #expect(received["ios_apns_received"].int == 0)
            #expect(received["ios_msg_received"].int == 0)
            #expect(received["wp_mpns_sent"] == .null && received.object?.keys.contains("wp_mpns_sent") == true)

            let detail = try await test.call("GET", "/v3/received/detail?msg_ids=\(sent.msgID)").json[0]
            #expect(detail["jpush_received"].int == 1)
            #expect(detail["ios_apns_sent"].int == 1)
            #expect(detail["android_pns_sent"] == .null && detail.object?.keys.contains("android_pns_sent") == true)

            let views = try await test.call("GET", "/v3/messages/detail?msg_ids=\(sent.msgID)").json[0]
            #expect(views["msg_id"].string == sent.msgID)
            let notification = views["details"]["notification"]
            #expect(Self.counts(notification) == [3, 2, 1, 1], "\(notification)")
            #expect(notification["display"] == .null && notification.object?.keys.contains("display") == true)
            #expect(Self.counts(notification["sub_android"]["jg_android"]) == [1, 1, 1, 1])
            #expect(Self.counts(notification["sub_ios"]["jg_ios"]) == [0, 0, 0, 0])
            #expect(Self.counts(notification["sub_ios"]["apns"]) == [1, 1, 0, 0])
            let message = views["details"]["message"]
            #expect(Self.counts(message) == [3, 1, 1, 0], "\(message)")
            #expect(Self.counts(message["sub_ios"]["jg_ios"]) == [1, 0, 0, 0])
            #expect(message["sub_ios"]["apns"] == .null)

            // JPush's older per-platform view of the same copies.
            let stats = try await test.call("GET", "/v3/messages?msg_ids=\(sent.msgID)").json[0]
            #expect(stats["msg_id"].string == sent.msgID)
            #expect(Self.android(stats) == [1, 1, 1, 1, 0], "\(stats)")
            #expect(Self.ios(stats) == [1, 1, 0, 0, 1, 0], "\(stats)")
            #expect(stats["winphone"] == ["mpns_target": .null, "mpns_sent": .null, "click": .null])

            let ids = [android, iphone, linux, bystander, foreign].map(\.registrationID) + [Identifiers.newRegistrationID(), "junk"]
            let statuses = try await test.call("POST", "/v3/status/message", ["msg_id": JSON(sent.msgID), "registration_ids": JSON(ids)])
            #expect(statuses.status == 200, "\(statuses.json)")
            #expect(ids.map { statuses.json[$0]["status"].int } == [0, 0, 1, 3, 2, 2, 2], "\(statuses.json)")

            // The iPhone connects and reads its inbox: its APNs copy is now known received,
            // and the in-app message with it.
            try await test.online(iphone) { reader in
                #expect(try await reader.next(where: \.isNotification) != nil)
                _ = try await test.settledReport(sent.msgID) { $0["tcp_delivered"].int == 2 }
            }
            let after = try await test.call("GET", "/v3/received?msg_ids=\(sent.msgID)").json[0]
            #expect(after["ios_apns_received"].int == 1)
            #expect(after["ios_msg_received"].int == 1)
            let afterViews = try await test.call("GET", "/v3/messages/detail?msg_ids=\(sent.msgID)").json[0]["details"]
            #expect(Self.counts(afterViews["notification"]["sub_ios"]["apns"]) == [1, 1, 1, 0])
            #expect(Self.counts(afterViews["message"]["sub_ios"]["jg_ios"]) == [1, 1, 1, 0])
            let afterStats = try await test.call("GET", "/v3/messages?msg_ids=\(sent.msgID)").json[0]
            #expect(Self.ios(afterStats) == [1, 1, 1, 0, 1, 1], "\(afterStats)")

            // Another app sees none of it.
            let outsider = Caller.basic(other.app.appKey, other.masterSecret)
            for path in ["/v3/received", "/v3/received/detail", "/v3/messages/detail", "/v3/messages"] {
                let answer = try await test.call("GET", "\(path)?msg_ids=\(sent.msgID)", as: outsider)
                #expect(answer.status == 200 && answer.json == [], "\(path)")
            }
        }
    }

    /// Presence follows the device's real connection: online while connected, then offline
    /// with the time its connection closed.
    @Test func deviceStatusFollowsTheConnection() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "android")
            let never = try await test.register(platform: "android")
            let body: JSON = ["registration_ids": JSON([device.registrationID, never.registrationID])]
            try await test.online(device) { _ in
                // The connection's claim is written a moment after its CONNACK (the
                // gateway group-commits claims): a loaded machine may answer between.
                try? await waitUntilAsync("the device to show online") {
                    try await test.call("POST", "/v3/devices/status", body).json[device.registrationID] == ["online": true]
                }
                let status = try await test.call("POST", "/v3/devices/status", body)
                #expect(status.json[device.registrationID] == ["online": true], "\(status.json)")
                #expect(status.json[never.registrationID] == ["online": false])
            }
            let closedBy = Date()
            var last = JSON.null
            let deadline = ContinuousClock.now + .seconds(10)
            repeat {
                last = try await test.call("POST", "/v3/devices/status", body).json[device.registrationID]
                if last["online"].bool == false { break }
                try await Task.sleep(for: .milliseconds(20))
            } while ContinuousClock.now < deadline
            let time = try #require(last["last_online_time"].string, "\(last)")
            let format = DateFormatter()
            format.locale = Locale(identifier: "en_US_POSIX")
            format.timeZone = TimeZone(identifier: "UTC")
            format.dateFormat = "yyyy-MM-dd HH:mm:ss"
            let parsed = try #require(format.date(from: time), "\(time)")
            #expect(abs(parsed.timeIntervalSince(closedBy)) < 30, "\(time) vs \(closedBy)")
        }
    }

    /// `[target, sent, received, click]` of a view or channel.
    static func counts(_ stats: JSON) -> [Int?] {
        [stats["target"].int, stats["sent"].int, stats["received"].int, stats["click"].int]
    }

    /// `/v3/messages`' Android numbers: `[target, online_push, received, click, msg_click]`.
    static func android(_ stats: JSON) -> [Int?] {
        let android = stats["android"]
        return [android["target"].int, android["online_push"].int, android["received"].int, android["click"].int, android["msg_click"].int]
    }

    /// `/v3/messages`' iOS numbers: `[apns_target, apns_sent, apns_received, click, target, received]`.
    static func ios(_ stats: JSON) -> [Int?] {
        let ios = stats["ios"]
        return [ios["apns_target"].int, ios["apns_sent"].int, ios["apns_received"].int, ios["click"].int, ios["target"].int, ios["received"].int]
    }
}
