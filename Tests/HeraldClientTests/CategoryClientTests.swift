import Foundation
import HeraldKit
import HeraldNodeTesting
import HeraldTestSupport
import Testing

@testable import HeraldKit

/// The SDK and server-managed categories: a notification carries its category's actions
/// and routes, a category sent ahead is an event, the app reports the version it holds,
/// and `push_extension` categories are kept in a file.
@Suite struct CategoryClientTests {
    static let category: JSON = [
        "identifier": "push_extension_sale",
        "default_router": ["router_url": "shop://sale"],
        "actions": [["identifier": "buy", "title": "Buy", "router": ["router_url": "shop://cart", "parameters": ["item": 42, "size": "L"]]]],
    ]

    @Test func theSDKExposesCategoriesAndRoutesAndReportsTheVersionItHolds() async throws {
        try await TestNode.run { test in
            #expect(try await test.call("POST", "/v3/categories", Self.category).status == 200)
            let device = try await test.register()
            let client = test.client(device)
            let reader = EventReader(client)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                _ = try await reader.next(where: { $0 == .connected })
                try await waitUntil("the gateway to register the device") { test.gateway.isConnected(device.registrationID) }

                let pushed = try await test.push([
                    "audience": ["registration_id": [JSON(device.registrationID)]],
                    "notification": ["ios": ["alert": "Sale", "category": "push_extension_sale", "media_url": "https://cdn.example.com/s.png"]],
                ])
                #expect(pushed.status == 200)
                guard case .notification(let notification) = try await reader.next(where: { if case .notification = $0 { true } else { false } })
                else { throw TestFailure("no notification: \(reader.all)") }
                let config = try #require(notification.config)
                #expect(config.identifier == "push_extension_sale" && config.version == 1 && config.isPersistent)
                #expect(config.route(forAction: "buy")?.routerURL == "shop://cart")
                #expect(config.route(forAction: "buy")?.parameters == ["item": "42", "size": "L"])
                #expect(config.route(forAction: nil)?.routerURL == "shop://sale")
                #expect(notification.mediaURL == "https://cdn.example.com/s.png")

                let delivered = try await test.call(
                    "POST",
                    "/v3/categories/push_extension_sale/deliver",
                    ["audience": ["registration_id": [JSON(device.registrationID)]]]
                )
                #expect(delivered.status == 200)
                guard case .categoryConfig(let ahead) = try await reader.next(where: { if case .categoryConfig = $0 { true } else { false } })
                else { throw TestFailure("no category config: \(reader.all)") }
                #expect(ahead.identifier == "push_extension_sale" && ahead.version == 1)

                try await client.report(.categoryVersion(category: ahead.identifier, version: ahead.version))
                let deadline = ContinuousClock.now + .seconds(10)
                var counted: JSON = .null
                while ContinuousClock.now < deadline {
                    counted = try await test.call("GET", "/v3/categories/push_extension_sale/devices").json
                    if counted["total"].int == 1 { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(counted["devices"] == [["version": 1, "count": 1]])
            }
        }
    }

    @Test func anAPNsPayloadGivesTheConfigurationAndMediaToTheServiceExtension() async throws {
        try await TestNode.run { test in
            #expect(try await test.call("POST", "/v3/categories", Self.category).status == 200)
            let token = TestNode.token(401)
            let device = try await test.register(token: token)
            let pushed = try await test.push([
                "audience": ["registration_id": [JSON(device.registrationID)]],
                "notification": ["ios": ["alert": "Sale", "category": "push_extension_sale", "media_url": "https://cdn.example.com/s.png"]],
            ])
            #expect(pushed.status == 200)
            let received = try #require(try await test.waitForAPNs(token).first)
            let userInfo = try #require(try JSONSerialization.jsonObject(with: Data(received.payload)) as? [AnyHashable: Any])
            let config = try #require(NotificationConfig(userInfo: userInfo))
            #expect(config.identifier == "push_extension_sale" && config.actions.map(\.title) == ["Buy"])
            #expect(NotificationConfig.mediaURL(userInfo: userInfo)?.absoluteString == "https://cdn.example.com/s.png")
        }
    }

    @Test func onlyPushExtensionCategoriesAreKeptAndANewerVersionReplacesAnOlder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-categories-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = CategoryStore(directory: directory)
        func config(_ identifier: String, _ version: Int64, title: String) throws -> NotificationConfig {
            let json = #"{"identifier":"\#(identifier)","version":\#(version),"actions":[{"identifier":"a","title":"\#(title)"}]}"#
            return try JSONDecoder().decode(NotificationConfig.self, from: Data(json.utf8))
        }
        #expect(try store.save(config("meeting", 1, title: "Join")) == false)
        #expect(try store.save(config("push_extension_order", 2, title: "View")))
        #expect(try store.save(config("push_extension_order", 1, title: "Old")) == false)
        // Another process (the service extension) reads the same file.
        let reopened = CategoryStore(directory: directory)
        #expect(Set(reopened.load().keys) == ["push_extension_order"])
        #expect(reopened.version(of: "push_extension_order") == 2)
        #expect(reopened.load()["push_extension_order"]?.actions.first?.title == "View")
        #expect(try store.save(config("push_extension_order", 3, title: "Open")))
        #expect(reopened.load()["push_extension_order"]?.actions.first?.title == "Open")
    }

    @Test func anInboxCopyWithLanguagesShowsTheDevicesLanguage() throws {
        let json =
            #"{"type":"notification","msg_id":"m","notification":{"alert":"Sale today","#
            + #""localizations":{"zh-Hans":{"title":"促销","body":"今天五折"},"en":"Half price today"}}}"#
        let payload = try JSONDecoder().decode(PushPayload.self, from: Data(json.utf8))
        func shown(_ language: String?) -> (String?, String?) {
            guard case .notification(let notification) = payload.events(language: language).first else { return (nil, nil) }
            return (notification.title, notification.alert)
        }
        #expect(shown("zh-Hans-CN") == ("促销", "今天五折"))
        #expect(shown("en_GB") == (nil, "Half price today"))
        #expect(shown("fr-FR") == (nil, "Sale today"))
        #expect(shown(nil) == (nil, "Sale today"))
        #expect(
            HeraldClient.Report.categoryVersion(category: "a\"b", version: 3).json == #"{"event":"category_version","category":"a\"b","version":3}"#
        )
    }
}
