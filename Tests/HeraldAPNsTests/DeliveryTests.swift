import Foundation
import HeraldAPNs
import HeraldAPNsSandbox
import Testing

@Suite("Delivery to the sandbox")
struct DeliveryTests {
    @Test func deliveredNotificationIsRecordedExactlyAsSent() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            var notification = alert("hello", collapseID: "message-1")
            notification.expiration = Date(timeIntervalSince1970: 2_000_000_000)
            let outcome = try await client.send(notification)

            #expect(outcome == .delivered(apnsID: notification.apnsID))
            let recorded = sandbox.notifications
            #expect(recorded.count == 1)
            let record = try #require(recorded.first)
            #expect(record.apnsID == notification.apnsID)
            #expect(record.deviceToken == deviceToken(1))
            #expect(record.topic == testBundleID)
            #expect(record.pushType == "alert")
            #expect(record.priority == 10)
            #expect(record.expiration == 2_000_000_000)
            #expect(record.collapseID == "message-1")
            #expect(record.payload == notification.payload)
            #expect(record.providerToken != nil)
        }
    }

    @Test func backgroundPushGoesAtPriorityFiveAndVoipToTheVoipTopic() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            let background = APNsNotification(
                deviceToken: deviceToken(2),
                pushType: .background,
                payload: Array(#"{"aps":{"content-available":1}}"#.utf8),
                priority: .immediate
            )
            let voip = APNsNotification(deviceToken: deviceToken(3), pushType: .voip, payload: Array(#"{"call":"1"}"#.utf8))
            #expect(try await client.send(background) == .delivered(apnsID: background.apnsID))
            #expect(try await client.send(voip) == .delivered(apnsID: voip.apnsID))

            let recorded = sandbox.notifications
            #expect(recorded.map(\.priority) == [5, 10])
            #expect(recorded.map(\.topic) == [testBundleID, testBundleID + ".voip"])
            #expect(recorded.map(\.pushType) == ["background", "voip"])
        }
    }

    @Test func sameCollapseIDReplacesTheShownNotificationAndARecallRemovesIt() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            let token = deviceToken(4)
            _ = try await client.send(alert("first", to: token, collapseID: "score"))
            _ = try await client.send(alert("other", to: token, collapseID: "news"))
            let second = alert("second", to: token, collapseID: "score")
            _ = try await client.send(second)

            var centre = sandbox.notificationCentre(for: token)
            #expect(centre.shown.map(\.identifier) == ["score", "news"])
            #expect(centre.notification(withIdentifier: "score")?.apnsID == second.apnsID)

            let recall = APNsNotification(
                deviceToken: token,
                pushType: .background,
                payload: Array(#"{"aps":{"content-available":1},"herald-recall":"score"}"#.utf8)
            )
            _ = try await client.send(recall)
            centre = sandbox.notificationCentre(for: token)
            #expect(centre.shown.map(\.identifier) == ["news"])
            #expect(centre.background.map(\.apnsID) == [recall.apnsID])
        }
    }

    @Test func plaintextH2CDeliversToo() async throws {
        try await withSandboxAndClient(transport: .plaintext) { sandbox, client async throws in
            let notification = alert("h2c")
            #expect(try await client.send(notification) == .delivered(apnsID: notification.apnsID))
            #expect(sandbox.notifications.map(\.apnsID) == [notification.apnsID])
        }
    }

    @Test func certificateAuthDeliversWithoutAProviderToken() async throws {
        try await withSandboxAndClient(auth: .certificate) { sandbox, client async throws in
            let notification = alert("with certificate")
            #expect(try await client.send(notification) == .delivered(apnsID: notification.apnsID))
            let record = try #require(sandbox.notifications.first)
            #expect(record.providerToken == nil)
            #expect(record.headers["authorization"] == nil)
            #expect(sandbox.notifications.count == 1)
        }
    }

    @Test func payloadsOverTheLimitAreRejectedBeforeSending() async throws {
        try await withSandboxAndClient { sandbox, client async throws in
            let tooLarge = APNsNotification(deviceToken: deviceToken(5), payload: Array(repeating: UInt8(ascii: "a"), count: 4097))
            await #expect(throws: APNsError.payloadTooLarge) { try await client.send(tooLarge) }

            let voipAtLimit = APNsNotification(
                deviceToken: deviceToken(5),
                pushType: .voip,
                payload: Array(repeating: UInt8(ascii: "a"), count: 5120)
            )
            #expect(try await client.send(voipAtLimit) == .delivered(apnsID: voipAtLimit.apnsID))

            let voipTooLarge = APNsNotification(
                deviceToken: deviceToken(5),
                pushType: .voip,
                payload: Array(repeating: UInt8(ascii: "a"), count: 5121)
            )
            await #expect(throws: APNsError.payloadTooLarge) { try await client.send(voipTooLarge) }

            let longCollapse = alert("x", collapseID: String(repeating: "c", count: 65))
            await #expect(throws: APNsError.collapseIDTooLong) { try await client.send(longCollapse) }

            #expect(sandbox.notifications.map(\.apnsID) == [voipAtLimit.apnsID])
            #expect(sandbox.rejections.isEmpty)
        }
    }
}
