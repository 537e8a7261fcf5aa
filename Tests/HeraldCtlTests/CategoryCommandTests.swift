import Foundation
import HeraldCore
import HeraldNodeTesting
import HeraldTestSupport
import Testing

/// `heraldctl categories` and `heraldctl push --category / --media-url`, against a node
/// and the APNs sandbox.
@Suite struct CategoryCommandTests {
    @Test func categoriesAreMadeFromFlagsOrAFileShownListedDeliveredCountedAndDeleted() async throws {
        try await CenterCtlTest.run { test in
            let made = try await test.heraldctl(
                "categories",
                "create",
                "push_extension_order",
                "--action",
                "view:View:shop://orders/1",
                "--action",
                "later:Later",
                "--router",
                "shop://orders",
                "--option",
                "customDismissAction"
            )
            #expect(made.status == 0, "\(made)")
            #expect(made.field("version") == "1", "\(made)")
            #expect(made.stdout.contains("view: View → shop://orders/1"), "\(made)")

            let file = test.ctl.home.appendingPathComponent("category.json")
            try Data(#"{"identifier": "meeting", "actions": [{"identifier": "join", "title": "Join", "options": ["foreground"]}]}"#.utf8)
                .write(to: file)
            #expect(try await test.heraldctl("categories", "create", "--body", file.path).status == 0)
            let bad = try await test.heraldctl("categories", "create", "x", "--action", "a:A:not a url")
            #expect(bad.status != 0)
            #expect(bad.stderr.contains("actions[0].router.router_url"), "\(bad)")

            let listed = try await test.heraldctl("categories", "list")
            #expect(listed.stdout.contains("push_extension_order") && listed.stdout.contains("meeting"), "\(listed)")

            let updated = try await test.heraldctl("categories", "update", "push_extension_order", "--action", "view:Open")
            #expect(updated.field("version") == "2", "\(updated)")
            let shown = try await test.heraldctl("categories", "show", "push_extension_order")
            #expect(shown.stdout.contains("view: Open"), "\(shown)")

            let device = try await test.iosDevice(alias: "ann")
            let delivered = try await test.heraldctl("categories", "deliver", "push_extension_order", "--alias", "ann")
            #expect(delivered.status == 0, "\(delivered)")
            #expect(delivered.field("version") == "2")
            let received = try #require(try await test.apns(device.token).first)
            #expect(received.pushType == "background")
            #expect((received.payloadJSON?["notification_config"] as? [String: Any])?["version"] as? Int == 2)

            let counted = try await test.heraldctl("categories", "devices", "push_extension_order")
            #expect(counted.stdout.contains("current version 2, 0 devices reported"), "\(counted)")

            #expect(try await test.heraldctl("categories", "delete", "meeting").status == 0)
            let gone = try await test.heraldctl("categories", "show", "meeting")
            #expect(gone.status != 0)
            #expect(gone.stderr.contains("9106"), "\(gone)")
        }
    }

    @Test func pushCategoryAndMediaURLReachAPNs() async throws {
        try await CenterCtlTest.run { test in
            #expect(try await test.heraldctl("categories", "create", "push_extension_news", "--action", "read:Read:news://1").status == 0)
            let device = try await test.iosDevice(alias: "bob")
            let sent = try await test.heraldctl(
                "push",
                "--alias",
                "bob",
                "--alert",
                "News",
                "--category",
                "push_extension_news",
                "--media-url",
                "https://cdn.example.com/n.png"
            )
            #expect(sent.status == 0, "\(sent)")
            let payload = try #require(try await test.apns(device.token).first?.payloadJSON)
            let aps = try #require(payload["aps"] as? [String: Any])
            #expect(aps["category"] as? String == "push_extension_news")
            #expect(aps["mutable-content"] as? Int == 1)
            #expect((payload["herald"] as? [String: Any])?["media_url"] as? String == "https://cdn.example.com/n.png")
            let config = try #require(payload["notification_config"] as? [String: Any])
            #expect(config["identifier"] as? String == "push_extension_news")
            #expect(((config["actions"] as? [[String: Any]])?.first)?["title"] as? String == "Read")
        }
    }
}
