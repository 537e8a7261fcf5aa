import Foundation
import Testing

@testable import HeraldKit

/// The design documents' `notification_config`, as an APNs notification carries it beside
/// `aps` (../shared/reference/categories.md): parsed with the iOS raw values as they are,
/// routes resolved, and kept by the prefix rule.
struct NotificationConfigTests {
    nonisolated(unsafe) static let userInfo: [AnyHashable: Any] = [
        "aps": [
            "alert": ["title": "Title", "subtitle": "Subtitle", "body": "Body"], "badge": 0, "sound": "1.caf",
            "mutable-content": 1, "category": "push_extension_category1",
        ] as [String: Any],
        "notification_config": [
            [
                "identifier": "push_extension_category1",
                "intent_identifiers": ["see"],
                "options": 0,
                "default_router": [
                    "router_url": "qq://detail/:id", "to_controller": "DetailViewController", "external_url": "https://www.qq.com",
                    "parameters": ["detail_id": "111"],
                ] as [String: Any],
                "actions": [
                    [
                        "identifier": "see", "title": "go", "text_input_button_title": "send", "text_input_placeholder": "I care~",
                        "options": 4, "behavior": 1, "extension_option": 2,
                        "router": [
                            "router_url": "qq://detail/:id", "to_controller": "DetailViewController",
                            "external_url": "https://www.qq.com/", "parameters": ["detail_id": "111", "title_name": "input"],
                        ] as [String: Any],
                    ] as [String: Any]
                ],
            ] as [String: Any]
        ],
    ]

    @Test func theDesignDocumentsExampleParsesWithItsRawValues() throws {
        let configs = NotificationConfig.all(userInfo: Self.userInfo)
        #expect(configs.count == 1)
        let config = try #require(configs.first)
        #expect(config.identifier == "push_extension_category1")
        #expect(config.version == 0)
        #expect(config.intentIdentifiers == ["see"])
        #expect(config.options == 0)
        #expect(config.isPersistent)
        let action = try #require(config.actions.first)
        #expect(action.options == 4)
        #expect(action.behavior == 1 && action.isTextInput)
        #expect(action.extensionOption == 2)
        #expect(action.textInputButtonTitle == "send" && action.textInputPlaceholder == "I care~")
        // A tap on the notification, and the action, resolve to their routes.
        #expect(config.route(forAction: nil)?.externalURL == "https://www.qq.com")
        #expect(config.route(forAction: "see")?.parameters == ["detail_id": "111", "title_name": "input"])
        #expect(config.route(forAction: "unknown")?.toController == "DetailViewController")
    }

    @Test func namesAsHeraldFirstSentThemGiveTheSameRawValues() throws {
        let json = #"""
            {"identifier": "c", "version": 3, "options": ["customDismissAction", "allowAnnouncement"],
             "actions": [{"identifier": "a", "title": "A", "options": ["destructive", "foreground"], "behavior": "textInput",
                          "extension_option": "handle"}]}
            """#
        let config = try JSONDecoder().decode(NotificationConfig.self, from: Data(json.utf8))
        #expect(config.options == 17)
        #expect(config.actions[0].options == 6)
        #expect(config.actions[0].behavior == 1)
        #expect(config.actions[0].extensionOption == 0)
        #expect(!config.isPersistent)
    }

    @Test func onlyPushExtensionCategoriesAreKeptAcrossLaunchesAndOnlyNewerVersions() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("categories-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = CategoryStore(directory: directory)
        let decode = { (json: String) in try JSONDecoder().decode(NotificationConfig.self, from: Data(json.utf8)) }
        #expect(try store.save(decode(#"{"identifier": "push_extension_a", "version": 2, "options": 1}"#)))
        #expect(try !store.save(decode(#"{"identifier": "sale", "version": 1}"#)))
        #expect(try !store.save(decode(#"{"identifier": "push_extension_a", "version": 1}"#)))
        let kept = CategoryStore(directory: directory).load()
        #expect(Array(kept.keys) == ["push_extension_a"])
        #expect(kept["push_extension_a"]?.options == 1)
        #expect(kept["push_extension_a"]?.version == 2)
    }
}
