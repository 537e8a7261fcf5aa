import Foundation
import HeraldCenter
import HeraldCore
import HeraldKit
import HeraldNode
import HeraldNodeTesting
import HeraldSMS
import HeraldTestSupport
import PostgresNIO
import Testing

/// `sms_message`: one SMS per device the push hasn't reached within its delay, through the
/// SMS sandbox; none after a recall; once, even when the node that claimed it died.
@Suite struct SMSFallbackTests {
    private static func withSMS(_ sms: SMSSandbox) -> @Sendable (inout HeraldNodeConfiguration) -> Void {
        { configuration in
            configuration.sms.provider = sms
            configuration.sms.lease = .seconds(1)
            configuration.sms.retryDelay = .milliseconds(300)
            configuration.sms.maxAttempts = 100
        }
    }

    private func bind(_ test: TestNode, _ device: DeviceCredentials, mobile: String) async throws {
        let answer = try await test.call("POST", "/v3/devices/\(device.registrationID)", ["mobile": JSON(mobile)])
        #expect(answer.status == 200, "\(answer.json)")
    }

    private func waitForSMS(_ sms: SMSSandbox, count: Int, timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while sms.received.count < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
    }

    @Test func anSMSGoesAfterItsDelayOnlyToTheDeviceTheNotificationDidNotReach() async throws {
        let sms = SMSSandbox()
        try await TestNode.run(configure: Self.withSMS(sms)) { test in
            let online = try await test.register(platform: "android")
            let offline = try await test.register(platform: "android")
            try await bind(test, online, mobile: "+8613800000001")
            try await bind(test, offline, mobile: "+8613800000002")
            try await test.online(online) { _ in
                let started = ContinuousClock.now
                let sent = try await test.push([
                    "audience": ["registration_id": [JSON(online.registrationID), JSON(offline.registrationID)]],
                    "notification": ["alert": "Your parcel is here"],
                    "sms_message": ["content": "Your parcel is here (SMS)", "delay_time": 2],
                ])
                #expect(sent.status == 200, "\(sent.json)")
                #expect(sent.json["warnings"].isNull, "\(sent.json)")
                #expect(try await test.status(sent.msgID, online.registrationID, becomes: "delivered_tcp") == "delivered_tcp")
                #expect(sms.received.isEmpty)
                try await waitForSMS(sms, count: 1)
                #expect(ContinuousClock.now - started >= .seconds(2))
                let received = try #require(sms.received.first)
                #expect(received.request.mobile == "+8613800000002")
                #expect(received.request.content == "Your parcel is here (SMS)")
                #expect(received.request.idempotencyKey == "\(sent.msgID):\(offline.registrationID)")
                // Nothing more comes, to either device.
                try await Task.sleep(for: .seconds(1))
                #expect(sms.received.count == 1)
                let report = try await test.call("GET", "/v3/report/received?msg_ids=\(sent.msgID)")
                #expect(report.json["reports"][0]["sms_sent"].int == 1)
                #expect(report.json["reports"][0]["sms_failed"].int == 0)
            }
            #expect(try await test.count("sms_outbox") == 1)
        }
    }

    @Test func aRecallCancelsTheSMSNotYetSent() async throws {
        let sms = SMSSandbox()
        try await TestNode.run(configure: Self.withSMS(sms)) { test in
            let planned = try await test.register(platform: "android")
            let later = try await test.register(platform: "android")
            try await bind(test, planned, mobile: "+8613800000003")
            try await bind(test, later, mobile: "+8613800000004")
            // One SMS planned at once, whose sending keeps failing for now; one still in its delay.
            sms.fail(next: 100)
            let first = try await test.push([
                "audience": ["registration_id": [JSON(planned.registrationID)]], "notification": ["alert": "a"],
                "sms_message": ["content": "a", "delay_time": 0], "options": ["identifier": "otp-1"],
            ])
            let second = try await test.push([
                "audience": ["registration_id": [JSON(later.registrationID)]], "notification": ["alert": "b"],
                // Far enough ahead that a loaded machine recalls it inside its delay.
                "sms_message": ["content": "b", "delay_time": 120], "options": ["identifier": "otp-2"],
            ])
            #expect(first.status == 200 && second.status == 200)
            try await waitUntilAsync("the first SMS to be tried") { try await test.count("sms_outbox WHERE attempts > 0") == 1 }
            let recalled = try await test.call("POST", "/v3/push/recall", ["identifiers": ["otp-1", "otp-2"]])
            #expect(recalled.status == 200, "\(recalled.json)")
            sms.answerNormally()
            try await Task.sleep(for: .seconds(4))
            #expect(sms.received.isEmpty)
            #expect(try await test.count("sms_outbox WHERE state = 'cancelled'") == 1)
            #expect(try await test.count("sms_outbox") == 1)
        }
    }

    /// A node claimed the SMS, the provider took it, and the node died before recording it:
    /// the claim's lease runs out, this node claims it again and sends it with the same
    /// idempotency key, which the provider (the sandbox) takes as the same SMS.
    @Test func anSMSWhoseNodeDiedAfterSendingIsSentOnce() async throws {
        let sms = SMSSandbox()
        try await TestNode.run(configure: Self.withSMS(sms)) { test in
            let device = try await test.register(platform: "android")
            try await bind(test, device, mobile: "+8613800000005")
            let sent = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]], "notification": ["alert": "c"],
                "sms_message": ["content": "c", "delay_time": 3],
            ])
            #expect(sent.status == 200)
            // The dead node: before the delay ran out here, it planned the SMS, claimed it
            // for 2 s, and the provider took it.
            try await test.stores.sql.query(
                """
                WITH m AS (UPDATE messages SET sms_planned_at = now() WHERE msg_id = \(sent.msgID) RETURNING id, app_id)
                INSERT INTO sms_outbox (message_id, device_id, app_id, state, attempts, next_attempt_at)
                SELECT m.id, d.id, m.app_id, 'sending', 1, now() + interval '2 seconds'
                FROM m, devices d WHERE d.registration_id = \(device.registrationID)
                """,
                logger: TestDatabase.logger
            )
            let request = SMSRequest(
                appID: test.appID,
                mobile: "+8613800000005",
                content: "c",
                idempotencyKey: "\(sent.msgID):\(device.registrationID)",
                msgID: sent.msgID
            )
            #expect(await sms.send(request) == .sent)
            try await waitUntilAsync("the SMS to be sent again") { try await test.count("sms_outbox WHERE state = 'sent'") == 1 }
            #expect(sms.received.count == 1)
            #expect(sms.duplicates == 1)
            #expect(try await test.count("sms_outbox WHERE attempts = 2") == 1)
        }
    }
}
