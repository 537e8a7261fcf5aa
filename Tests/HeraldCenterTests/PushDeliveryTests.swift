import Foundation
import HeraldCenter
import HeraldCore
import HeraldGateway
import HeraldKit
import HeraldNode
import HeraldNodeTesting
import HeraldTestSupport
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// A push from the HTTP request to the device, over each channel.
@Suite struct PushDeliveryTests {
    @Test func anOnlineDeviceReceivesOverTCPAndAcknowledges() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(1)
            let device = try await test.register(token: token, alias: "alice")
            try await test.online(device) { reader in
                let sent = try await test.push(["audience": ["alias": ["alice"]], "notification": ["alert": "Hello"], "cid": "c-1"])
                #expect(sent.status == 200)
                #expect(sent.json["cid"].string == "c-1")
                let event = try await reader.next(where: \.isNotification)
                #expect(event?.notification?.alert == "Hello")
                #expect(event?.notification?.messageID == sent.msgID)
                let report = try await test.settledReport(sent.msgID)
                #expect(report["targeted"].int == 1)
                #expect(report["tcp_delivered"].int == 1)
                #expect(report["apns_sent"].int == 0)
                #expect(try await test.status(sent.msgID, device.registrationID, becomes: "delivered_tcp") == "delivered_tcp")
            }
            #expect(test.apnsReceived(token).isEmpty)
        }
    }

    @Test func anOfflineIOSDeviceGetsAPNs() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(2)
            let device = try await test.register(token: token, tags: ["news"])
            let sent = try await test.push([
                "audience": ["tag": ["news"]],
                "notification": ["ios": ["alert": ["title": "Title", "body": "Body"], "badge": "+2", "sound": "ping.caf", "extras": ["k": "v"]]],
                "options": ["identifier": "story-1"],
            ])
            #expect(sent.status == 200)
            let received = try await test.waitForAPNs(token)
            #expect(received.count == 1)
            let notification = try #require(received.first)
            #expect(notification.collapseID == "story-1")
            #expect(notification.pushType == "alert")
            let aps = notification.json["aps"]
            #expect(aps["alert"]["title"].string == "Title")
            #expect(aps["badge"].int == 2)
            #expect(aps["sound"].string == "ping.caf")
            #expect(notification.json["k"].string == "v")
            let report = try await test.settledReport(sent.msgID)
            #expect(report["apns_sent"].int == 1)
            #expect(report["tcp_delivered"].int == 0)
            #expect(try await test.status(sent.msgID, device.registrationID, becomes: "sent_apns") == "sent_apns")
            // "+2" again: the badge counts up on the server.
            let again = try await test.push(["audience": ["tag": ["news"]], "notification": ["ios": ["badge": "+2"]]])
            let second = try await test.waitForAPNs(token, count: 2)
            #expect(again.status == 200)
            #expect(second.last?.json["aps"]["badge"].int == 4)
        }
    }

    @Test func aDeviceThatDoesNotAcknowledgeGetsTheAPNsFallbackOnce() async throws {
        let shortAckTimeout: @Sendable (inout HeraldNodeConfiguration) -> Void = { $0.center.ackTimeout = .milliseconds(500) }
        try await TestNode.run(configure: shortAckTimeout) { test in
            let token = TestNode.token(3)
            let device = try await test.register(token: token, alias: "slow")
            let mqtt = try await test.rawConnection(device)
            let sent = try await test.push(["audience": ["alias": ["slow"]], "notification": ["alert": "Are you there?"]])
            let publish = try await mqtt.nextPublish(acknowledge: false)
            #expect(publish != nil)
            let received = try await test.waitForAPNs(token)
            #expect(received.count == 1)
            #expect(received.first?.collapseID == sent.msgID)
            let report = try await test.settledReport(sent.msgID)
            #expect(report["apns_sent"].int == 1)
            try await Task.sleep(for: .milliseconds(300))
            #expect(test.apnsReceived(token).count == 1)
            await mqtt.close()
        }
    }

    @Test func copiesForDevicesWithoutAConnectionDoNotWaitForAnotherPushsAcknowledgement() async throws {
        // The only worker is held inside the first push, so the next two are claimed and
        // routed together: one to a connected device that never acknowledges (30 s timeout),
        // one to an iOS device without a connection, which must go to APNs at once.
        let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        // However the test ends, the held worker goes on, or the center's shutdown waits for it.
        defer { releaseContinuation.finish() }
        let first = NIOLockedValueBox(true)
        let faults = CenterFaults(afterBatch: { _, _ in
            guard
                first.withLockedValue({ isFirst in
                    defer { isFirst = false }
                    return isFirst
                })
            else { return }
            enteredContinuation.yield()
            for await _ in release { break }
        })
        let oneWorker: @Sendable (inout HeraldNodeConfiguration) -> Void = {
            $0.center.workers = 1
            $0.center.ackTimeout = .seconds(30)
        }
        try await TestNode.run(configure: oneWorker, faults: faults) { test in
            _ = try await test.register(token: TestNode.token(20), alias: "first")
            let silent = try await test.register(token: TestNode.token(21), alias: "silent")
            let offlineToken = TestNode.token(22)
            _ = try await test.register(token: offlineToken, alias: "offline")
            let mqtt = try await test.rawConnection(silent)

            #expect(try await test.push(["audience": ["alias": ["first"]], "notification": ["alert": "first"]]).status == 200)
            var holding = entered.makeAsyncIterator()
            _ = await holding.next()
            #expect(try await test.push(["audience": ["alias": ["silent"]], "notification": ["alert": "unanswered"]]).status == 200)
            #expect(try await test.push(["audience": ["alias": ["offline"]], "notification": ["alert": "at once"]]).status == 200)
            releaseContinuation.yield()

            #expect(try await mqtt.nextPublish(acknowledge: false) != nil)
            let received = try await test.waitForAPNs(offlineToken, timeout: .seconds(10))
            #expect(received.count == 1)
            #expect(test.apnsReceived(TestNode.token(21)).isEmpty)
            await mqtt.close()
        }
    }

    @Test func inAppMessagesNeverGoToAPNsAndWaitForTheConnection() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(4)
            let device = try await test.register(token: token, alias: "reader")
            let sent = try await test.push(["audience": ["alias": ["reader"]], "message": ["msg_content": "inside the app", "title": "Hi"]])
            let report = try await test.settledReport(sent.msgID)
            #expect(report["waiting"].int == 1)
            #expect(test.apnsReceived(token).isEmpty)
            try await test.online(device) { reader in
                let event = try await reader.next(where: { if case .message = $0 { true } else { false } })
                guard case .message(let message) = event else { throw TestFailure("no in-app message") }
                #expect(message.content == "inside the app")
                _ = try await test.settledReport(sent.msgID) { $0["tcp_delivered"].int == 1 }
                #expect(try await test.status(sent.msgID, device.registrationID, becomes: "delivered_tcp") == "delivered_tcp")
            }
        }
    }

    @Test func voipPushesGoToTheVoIPToken() async throws {
        try await TestNode.run { test in
            let http = HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey)
            let credentials = try await http.register(platform: "ios", apnsToken: TestNode.token(5), apnsEnvironment: "sandbox")
            let voip = TestNode.token(6)
            let updated = try await test.call("POST", "/v3/devices/\(credentials.registrationID)", ["voip_token": JSON(voip)])
            #expect(updated.status == 200)
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(credentials.registrationID)]],
                "notification": ["ios": ["alert": "Call", "push_type": "voip"]],
            ])
            #expect(sent.status == 200)
            let received = try await test.waitForAPNs(voip)
            #expect(received.first?.pushType == "voip")
            #expect(received.first?.topic?.hasSuffix(".voip") == true)
            #expect(test.apnsReceived(TestNode.token(5)).isEmpty)
        }
    }

    /// A VoIP token APNs no longer takes, found by the VoIP push sent beside a notification,
    /// is removed from its device; the device's APNs token stays valid and gets the next push.
    @Test func aVoIPTokenAPNsNoLongerTakesIsRemovedAndTheAPNsTokenStaysValid() async throws {
        try await TestNode.run { test in
            let http = HeraldAPIClient(baseURL: test.apiURL, appKey: test.appKey)
            let apnsToken = TestNode.token(7)
            let credentials = try await http.register(platform: "ios", apnsToken: apnsToken, apnsEnvironment: "sandbox")
            let voip = TestNode.token(8)
            #expect(try await test.call("POST", "/v3/devices/\(credentials.registrationID)", ["voip_token": JSON(voip)]).status == 200)
            test.sandbox.markUnregistered(voip, since: Date())
            let call: JSON = [
                "audience": ["registration_id": [JSON(credentials.registrationID)]],
                "notification": ["ios": ["alert": "Ann is calling"], "voip": ["caller": "Ann"]],
            ]
            let first = try await test.push(call)
            #expect(first.status == 200)
            #expect(try await test.status(first.msgID, credentials.registrationID, becomes: "sent_apns") == "sent_apns")

            let rows = try await test.stores.sql.query(
                "SELECT voip_token, token_valid FROM devices WHERE registration_id = \(credentials.registrationID)",
                logger: TestDatabase.logger
            )
            var device: (String?, Bool)?
            for try await row in rows.decode((String?, Bool).self) { device = row }
            #expect(device?.0 == nil, "the VoIP token is removed")
            #expect(device?.1 == true, "the APNs token stays valid")

            let second = try await test.push(call)
            #expect(try await test.status(second.msgID, credentials.registrationID, becomes: "sent_apns") == "sent_apns")
            #expect(test.apnsReceived(apnsToken).count == 2)
        }
    }

    @Test func timeToLiveZeroIsForOnlineDevicesOnlyAndTTLExpiryIsFinal() async throws {
        try await TestNode.run { test in
            let offline = try await test.register(platform: "linux", alias: "off")
            let zero = try await test.push([
                "audience": ["alias": ["off"]], "message": ["msg_content": "now or never"], "options": ["time_to_live": 0],
            ])
            let zeroReport = try await test.settledReport(zero.msgID)
            #expect(zeroReport["expired"].int == 1)
            let short = try await test.push([
                "audience": ["alias": ["off"]], "message": ["msg_content": "soon stale"], "options": ["time_to_live": 1],
            ])
            _ = try await test.settledReport(short.msgID)
            try await Task.sleep(for: .milliseconds(1200))
            let kept = try await test.push(["audience": ["alias": ["off"]], "message": ["msg_content": "still good"]])
            _ = try await test.settledReport(kept.msgID)
            try await test.online(offline) { reader in
                let event = try await reader.next(where: { if case .message = $0 { true } else { false } })
                guard case .message(let message) = event else { throw TestFailure("nothing replayed") }
                #expect(message.content == "still good")
                #expect(try await reader.next(where: { if case .message = $0 { true } else { false } }, timeout: .milliseconds(500)) == nil)
            }
            let expired = try await test.settledReport(short.msgID)
            #expect(expired["expired"].int == 1)
            #expect(try await test.status(short.msgID, offline.registrationID, becomes: "expired") == "expired")
        }
    }

    /// Inbox rows whose time to live passed are deleted by the center, acknowledged or not,
    /// for devices that never come back too; only the unacknowledged copies count as expired.
    @Test func theCenterDeletesExpiredInboxRowsOfDevicesThatNeverComeBack() async throws {
        let purgeOften: @Sendable (inout HeraldNodeConfiguration) -> Void = { $0.center.inboxPurgeInterval = .milliseconds(200) }
        try await TestNode.run(configure: purgeOften) { test in
            let away = try await test.register(platform: "linux", alias: "away")
            let here = try await test.register(platform: "linux", alias: "here")
            let kept = try await test.push(["audience": ["alias": ["away"]], "message": ["msg_content": "good for a day"]])
            let stale = try await test.push([
                "audience": ["alias": ["away", "here"]], "message": ["msg_content": "stale soon"], "options": ["time_to_live": 1],
            ])
            try await test.online(here) { reader in
                #expect(try await reader.next(where: \.isMessage) != nil)
                _ = try await test.settledReport(stale.msgID, until: { $0["tcp_delivered"].int == 1 })
            }
            _ = try await test.settledReport(kept.msgID)
            #expect(try await test.count("device_messages") == 3)
            let deadline = ContinuousClock.now + .seconds(10)
            while try await test.count("device_messages") > 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            #expect(try await test.count("device_messages") == 1)
            #expect(try await test.status(stale.msgID, away.registrationID, becomes: "expired") == "expired")
            #expect(try await test.status(stale.msgID, here.registrationID, becomes: "delivered_tcp") == "delivered_tcp")
            let report = try await test.settledReport(stale.msgID)
            #expect(report["expired"].int == 1)
            #expect(report["tcp_delivered"].int == 1)
            #expect(try await test.status(kept.msgID, away.registrationID, becomes: "waiting") == "waiting")
        }
    }

    @Test func theCenterDeletesMessagesPastTheirRetentionWithTheirDeliveries() async throws {
        let purgeOften: @Sendable (inout HeraldNodeConfiguration) -> Void = {
            $0.center.inboxPurgeInterval = .milliseconds(200)
            $0.center.messageRetention = .seconds(30 * 86_400)
        }
        try await TestNode.run(configure: purgeOften) { test in
            let device = try await test.register(platform: "linux", alias: "d")
            let legacy = try await test.push(["audience": ["alias": ["d"]], "message": ["msg_content": "from before"]])
            let old = try await test.push(["audience": ["alias": ["d"]], "message": ["msg_content": "old"]])
            let recent = try await test.push(["audience": ["alias": ["d"]], "message": ["msg_content": "recent"]])
            _ = try await test.settledReport(legacy.msgID)
            _ = try await test.settledReport(old.msgID)
            _ = try await test.settledReport(recent.msgID)
            #expect(try await test.count("deliveries") == 3)

            // As if sent 31 days ago: its id begins with that time, as ids do.
            let then = Date().addingTimeInterval(-31 * 86_400)
            let oldID = Identifiers.msgID(milliseconds: UInt64(then.timeIntervalSince1970 * 1000), node: 0, sequence: 0)
            try await test.stores.sql.query(
                "UPDATE messages SET msg_id = \(oldID), created_at = \(then) WHERE msg_id = \(old.msgID)"
            )
            // And one stored before ids were decimal: 24 hex characters, time first.
            let legacyID = Identifiers.legacyMsgIDTime(milliseconds: UInt64(then.timeIntervalSince1970 * 1000)) + "00000000beef"
            try await test.stores.sql.query(
                "UPDATE messages SET msg_id = \(legacyID), created_at = \(then) WHERE msg_id = \(legacy.msgID)"
            )
            let deadline = ContinuousClock.now + .seconds(10)
            while try await test.count("messages") > 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            #expect(try await test.count("messages WHERE msg_id = '\(oldID)'") == 0)
            #expect(try await test.count("messages WHERE msg_id = '\(legacyID)'") == 0)
            #expect(try await test.count("messages WHERE msg_id = '\(recent.msgID)'") == 1)
            #expect(try await test.count("deliveries") == 1)
            #expect(try await test.status(recent.msgID, device.registrationID, becomes: "waiting") == "waiting")
        }
    }

    @Test func aRepeatedCIDReturnsTheFirstResultAndSendsNothing() async throws {
        try await TestNode.run { test in
            let token = TestNode.token(7)
            _ = try await test.register(token: token, alias: "once")
            let first = try await test.push(["audience": ["alias": ["once"]], "notification": ["alert": "one"], "cid": "order-42"])
            let second = try await test.push(["audience": ["alias": ["once"]], "notification": ["alert": "two"], "cid": "order-42"])
            #expect(first.status == 200)
            #expect(second.status == 200)
            #expect(first.msgID == second.msgID)
            _ = try await test.settledReport(first.msgID)
            try await Task.sleep(for: .milliseconds(300))
            #expect(test.apnsReceived(token).count == 1)
        }
    }

    @Test func reportsCountOpenedMessages() async throws {
        try await TestNode.run { test in
            let device = try await test.register(platform: "linux", alias: "opener")
            let client = test.client(device)
            let reader = EventReader(client)
            let running = Task { await client.run() }
            defer { running.cancel() }
            _ = try await reader.next(where: { $0 == .connected })
            try await waitUntil("the gateway to register \(device.registrationID)") { test.gateway.isConnected(device.registrationID) }
            let sent = try await test.push(["audience": ["alias": ["opener"]], "notification": ["alert": "open me"]])
            let event = try await reader.next(where: \.isNotification)
            #expect(event != nil)
            try await client.report(.opened(messageID: sent.msgID))
            let report = try await test.settledReport(sent.msgID) { $0["opened"].int == 1 }
            #expect(report["opened"].int == 1)
        }
    }
}
