import Foundation
import HeraldCore
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// `heraldctl webhooks`, `events` and `status --timeline` against a whole node.
@Suite struct EventsCommandTests {
    @Test func webhooksAreAddedListedTestedAndRemoved() async throws {
        try await TestReceiver.run { receiver in
            try await CenterCtlTest.run { test in
                let appKey = test.app.app.appKey
                let added = try await test.ctl.admin("webhooks", "add", appKey, receiver.url(), "--types", "sent_apns,failed")
                #expect(added.status == 0, "\(added)")
                let id = try #require(added.field("id"))
                #expect(added.field("types") == "sent_apns,failed")
                let secret = try #require(added.field("secret")?.split(separator: " ").first.map(String.init))
                #expect(added.stdout.contains("(shown only once)"))

                let listed = try await test.ctl.admin("webhooks", "list", appKey)
                #expect(listed.status == 0, "\(listed)")
                let lines = listed.stdout.split(separator: "\n").map(String.init)
                #expect(lines.first?.hasPrefix("ID") == true)
                #expect(lines.count == 2)
                #expect(lines[1].contains(receiver.url()) && lines[1].contains("sent_apns,failed"))
                #expect(!listed.stdout.contains(secret))

                let tested = try await test.ctl.admin("webhooks", "test", appKey, id)
                #expect(tested.status == 0, "\(tested)")
                #expect(tested.stdout.hasPrefix("webhook \(id) answered 200"))
                let request = try #require(receiver.requests.last)
                let timestamp = try #require(request.headers["x-herald-timestamp"].flatMap { Int64($0) })
                #expect(
                    WebhookSignature.isValid(request.headers["x-herald-signature"] ?? "", secret: secret, timestamp: timestamp, body: request.body)
                )

                let bad = try await test.ctl.admin("webhooks", "add", appKey, "ftp://example.com")
                #expect(bad.status == 1)
                #expect(bad.stderr.hasPrefix("error \(HeraldError.Code.invalidField.rawValue): url:"))

                let removed = try await test.ctl.admin("webhooks", "remove", appKey, id)
                #expect(removed.status == 0, "\(removed)")
                let again = try await test.ctl.admin("webhooks", "remove", appKey, id)
                #expect(again.status == 1)
                #expect(again.stderr.hasPrefix("error \(HeraldError.Code.webhookNotFound.rawValue):"))
            }
        }
    }

    @Test func eventsArePrintedFromACursorAndFollowedAndATimelineIsShown() async throws {
        try await CenterCtlTest.run { test in
            try await test.node.recordEvents()
            let device = try await test.iosDevice(alias: "alice")
            let first = try await test.node.push(["audience": ["alias": ["alice"]], "notification": ["alert": "one"]])
            _ = try await test.apns(device.token)
            let page = try await test.heraldctl("events", "--follow", "--types", "accepted", "--max-events", "1")
            #expect(page.status == 0, "\(page)")
            let line = try #require(page.stdout.split(separator: "\n").first.map(String.init))
            #expect(line.contains("  accepted  \(first.msgID)  -"))
            let cursor = try #require(page.stderr.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines))

            // Following from the cursor: the next push's events, as NDJSON.
            async let followed = test.heraldctl(
                "events",
                "--follow",
                "--after",
                cursor,
                "--types",
                "accepted,sent_apns",
                "--json",
                "--max-events",
                "3"
            )
            try await Task.sleep(for: .milliseconds(300))
            let second = try await test.node.push(["audience": ["alias": ["alice"]], "notification": ["alert": "two"]])
            let result = try await followed
            #expect(result.status == 0, "\(result)")
            let events = result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            // The first push's sent_apns comes after the cursor too, then the second's two.
            #expect(events.count == 3, "\(result)")
            #expect(events.filter { $0["msg_id"] as? String == first.msgID }.map { $0["type"] as? String } == ["sent_apns"])
            #expect(events.filter { $0["msg_id"] as? String == second.msgID }.map { $0["type"] as? String } == ["accepted", "sent_apns"])

            let timeline = try await test.heraldctl("status", second.msgID, "--rid", device.registrationID, "--timeline")
            #expect(timeline.status == 0, "\(timeline)")
            #expect(timeline.stdout.hasPrefix("\(device.registrationID)  state apns  (from events)"))
            for step in ["accepted", "stored", "sent_apns"] { #expect(timeline.stdout.contains("  \(step)  "), "\(step)") }
            #expect(timeline.stdout.contains("apns_status=200"))
        }
    }
}
