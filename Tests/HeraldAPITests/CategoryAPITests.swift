import Foundation
import HTTPTypes
import HeraldCore
import HeraldTestSupport
import Testing

/// `/v3/categories`: made, listed, read, changed and deleted; bad definitions refused with
/// the field named and nothing stored.
@Suite struct CategoryAPITests {
    static let valid =
        #"{"identifier": "push_extension_order", "intent_identifiers": ["order"], "options": ["customDismissAction"], "#
        + #""default_router": {"router_url": "shop://orders/1", "to_controller": "OrderViewController", "parameters": {"id": 1}}, "#
        + #""actions": [{"identifier": "view", "title": "View", "options": ["foreground"], "behavior": "default", "extension_option": "open", "#
        + #""router": {"external_url": "https://example.com/orders/1"}}, {"identifier": "reply", "title": "Reply", "behavior": "textInput", "#
        + #""text_input_button_title": "Send", "text_input_placeholder": "Message"}]}"#

    @Test func aCategoryIsCreatedListedReadUpdatedAndDeleted() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let created = try await api.send(.post, "/v3/categories", auth: app.auth, json: Self.valid)
            #expect(created.status == 200)
            let json = try created.json
            #expect(json["identifier"] as? String == "push_extension_order")
            #expect(json["version"] as? Int == 1)
            #expect((json["actions"] as? [[String: Any]])?.count == 2)
            #expect(json["created_at"] is String)

            let again = try await api.send(.post, "/v3/categories", auth: app.auth, json: Self.valid)
            #expect(again.errorCode == HeraldError.Code.conflict.rawValue)

            let listed = try await api.send(.get, "/v3/categories", auth: app.auth).json
            #expect((listed["categories"] as? [[String: Any]])?.map { $0["identifier"] as? String } == ["push_extension_order"])

            let updated = try await api.send(
                .put,
                "/v3/categories/push_extension_order",
                auth: app.auth,
                json: #"{"actions": [{"identifier": "view", "title": "Open"}]}"#
            )
            #expect(updated.status == 200)
            #expect(try updated.json["version"] as? Int == 2)
            let shown = try await api.send(.get, "/v3/categories/push_extension_order", auth: app.auth).json
            #expect(shown["version"] as? Int == 2)
            #expect(((shown["actions"] as? [[String: Any]])?.first)?["title"] as? String == "Open")
            #expect(shown["default_router"] == nil)

            let renamed = try await api.send(.put, "/v3/categories/push_extension_order", auth: app.auth, json: #"{"identifier": "other"}"#)
            #expect(renamed.errorCode == HeraldError.Code.invalidField.rawValue)

            #expect(try await api.send(.delete, "/v3/categories/push_extension_order", auth: app.auth).status == 200)
            let gone = try await api.send(.get, "/v3/categories/push_extension_order", auth: app.auth)
            #expect(gone.status == 404)
            #expect(gone.errorCode == HeraldError.Code.categoryNotFound.rawValue)
            let missing = try await api.send(.put, "/v3/categories/nope", auth: app.auth, json: #"{"actions": []}"#)
            #expect(missing.errorCode == HeraldError.Code.categoryNotFound.rawValue)
            #expect(try await api.send(.delete, "/v3/categories/nope", auth: app.auth).errorCode == HeraldError.Code.categoryNotFound.rawValue)
        }
    }

    /// The design documents' `notification_config` entry, verbatim: raw values of the iOS
    /// types (../shared/reference/categories.md).
    static let designDocuments = #"""
        {"identifier": "push_extension_category1", "intent_identifiers": ["see"], "options": 0,
         "default_router": {"router_url": "qq://detail/:id", "to_controller": "DetailViewController",
                            "external_url": "https://www.qq.com", "parameters": {"detail_id": "111"}},
         "actions": [{"identifier": "see", "title": "go", "text_input_button_title": "send", "text_input_placeholder": "I care~",
                      "options": 4, "behavior": 1, "extension_option": 2,
                      "router": {"router_url": "qq://detail/:id", "to_controller": "DetailViewController",
                                 "external_url": "https://www.qq.com/", "parameters": {"detail_id": "111", "title_name": "input"}}}]}
        """#

    @Test func theDesignDocumentsShapeIsTakenAndShownWithRawValuesAsNamesAreToo() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let created = try await api.send(.post, "/v3/categories", auth: app.auth, json: Self.designDocuments)
            #expect(created.status == 200, "\(created.body)")
            let json = try created.json
            #expect(json["options"] as? Int == 0)
            let action = try #require((json["actions"] as? [[String: Any]])?.first)
            #expect(action["options"] as? Int == 4)
            #expect(action["behavior"] as? Int == 1)
            #expect(action["extension_option"] as? Int == 2)
            // Names, as Herald first took them, come out as the same raw values.
            let named = try await api.send(.post, "/v3/categories", auth: app.auth, json: Self.valid).json
            #expect(named["options"] as? Int == 1)
            let actions = try #require(named["actions"] as? [[String: Any]])
            #expect(actions[0]["options"] as? Int == 4)
            #expect(actions[0]["behavior"] as? Int == 0)
            #expect(actions[0]["extension_option"] as? Int == 2)
            #expect(actions[1]["behavior"] as? Int == 1)
        }
    }

    @Test func rawValuesOutsideTheIOSTypesAreRefusedWithTheFieldNamed() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let cases: [(body: String, field: String)] = [
                (#"{"identifier": "c", "options": 32}"#, "options"),
                (#"{"identifier": "c", "options": -1}"#, "options"),
                (#"{"identifier": "c", "actions": [{"identifier": "a", "title": "A", "options": 8}]}"#, "actions[0].options"),
                (#"{"identifier": "c", "actions": [{"identifier": "a", "title": "A", "behavior": 2}]}"#, "actions[0].behavior"),
                (#"{"identifier": "c", "actions": [{"identifier": "a", "title": "A", "extension_option": 3}]}"#, "actions[0].extension_option"),
                (
                    #"{"identifier": "c", "actions": [{"identifier": "a", "title": "A", "behavior": 0, "text_input_placeholder": "x"}]}"#,
                    "actions[0].behavior"
                ),
            ]
            for (body, field) in cases {
                let answer = try await api.send(.post, "/v3/categories", auth: app.auth, json: body)
                #expect(answer.errorCode == HeraldError.Code.invalidField.rawValue, "\(body)")
                #expect(answer.errorMessage?.contains(field) == true, "\(body): \(answer.errorMessage ?? "")")
            }
            #expect((try await api.send(.get, "/v3/categories", auth: app.auth).json["categories"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func badDefinitionsAreRefusedWithTheFieldNamedAndNothingIsStored() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let action = #"{"identifier": "a", "title": "A"}"#
            let long = String(repeating: "x", count: 65)
            let cases: [(body: String, code: HeraldError.Code, field: String)] = [
                (#"{"identifier": "c", "actions": [\#(Array(repeating: action, count: 5).joined(separator: ","))]}"#, .invalidField, "actions"),
                (#"{"identifier": "\#(long)"}"#, .invalidField, "identifier"),
                (#"{"identifier": "c", "actions": [{"identifier": "\#(long)", "title": "A"}]}"#, .invalidField, "actions[0].identifier"),
                (#"{"identifier": "c", "default_router": {"router_url": "not a url"}}"#, .invalidField, "default_router.router_url"),
                (#"{"identifier": "c", "default_router": {"external_url": "ftp://example.com/x"}}"#, .invalidField, "default_router.external_url"),
                (
                    #"{"identifier": "c", "actions": [{"identifier": "a", "title": "A", "router": {"router_url": "https://"}}]}"#, .invalidField,
                    "actions[0].router.router_url"
                ),
                (#"{"identifier": "c", "colour": "red"}"#, .unsupportedKey, "colour"),
                (#"{"identifier": "c", "actions": [{"identifier": "a", "title": "A", "icon": "x"}]}"#, .unsupportedKey, "actions[0].icon"),
                (#"{"identifier": "c", "actions": [{"identifier": "a", "title": "A", "behavior": "swipe"}]}"#, .invalidField, "actions[0].behavior"),
                (#"{"identifier": "c", "options": ["loud"]}"#, .invalidField, "options[0]"),
                (#"{"identifier": "c", "actions": [\#(action), \#(action)]}"#, .invalidField, "actions[1].identifier"),
                (#"{"identifier": "c", "actions": [{"identifier": "a"}]}"#, .missingField, "title"),
            ]
            for (body, code, field) in cases {
                let answer = try await api.send(.post, "/v3/categories", auth: app.auth, json: body)
                #expect(answer.errorCode == code.rawValue, "\(body): \(answer.body)")
                #expect(answer.body.contains(field), "\(body): \(answer.body)")
            }
            let listed = try await api.send(.get, "/v3/categories", auth: app.auth).json
            #expect((listed["categories"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func aPushMayNotSetNotificationConfigItself() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            _ = try await api.registerDevice(app)
            let answer = try await api.send(
                .post,
                "/v3/push",
                auth: app.auth,
                json: #"{"audience": "all", "notification": {"ios": {"alert": "hi", "notification_config": {"identifier": "x"}}}}"#
            )
            #expect(answer.errorCode == HeraldError.Code.unsupportedKey.rawValue)
            #expect(answer.body.contains("notification.ios.notification_config"))
        }
    }

    @Test func richContentFieldsAreChecked() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            _ = try await api.registerDevice(app)
            for (ios, field) in [
                (#"{"alert": "hi", "media_url": "file:///etc/passwd"}"#, "notification.ios.media_url"),
                (#"{"alert": "hi", "media_url": "https://example.com/\#(String(repeating: "a", count: 1030))"}"#, "notification.ios.media_url"),
                (#"{"alert": "hi", "relevance-score": 1.5}"#, "notification.ios.relevance-score"),
                (#"{"alert": "hi", "target-content-id": ""}"#, "notification.ios.target-content-id"),
            ] {
                let answer = try await api.send(.post, "/v3/push", auth: app.auth, json: #"{"audience": "all", "notification": {"ios": \#(ios)}}"#)
                #expect(answer.errorCode == HeraldError.Code.invalidField.rawValue, "\(ios): \(answer.body)")
                #expect(answer.body.contains(field), "\(ios): \(answer.body)")
            }
            let fine = try await api.send(
                .post,
                "/v3/push",
                auth: app.auth,
                json:
                    #"{"audience": "all", "notification": {"ios": {"alert": "hi", "media_url": "https://example.com/a.gif", "relevance-score": 0.5, "#
                    + #""target-content-id": "inbox", "filter-criteria": "work", "extras": {"n": 1, "list": [1, "a"], "obj": {"b": true}}}}}"#
            )
            #expect(fine.status == 200, "\(fine.body)")
        }
    }
}

/// Only `POST /v3/push` carries a category's configuration: the batch pushes and
/// schedules refuse one written in the request.
@Suite struct CategoryConfigInjectionTests {
    @Test func batchPushesAndSchedulesMayNotSetNotificationConfig() async throws {
        try await APITest.run { api in
            let app = try await api.createApp()
            let device = try await api.registerDevice(app)
            let ios = #"{"alert": "hi", "notification_config": {"identifier": "x", "version": 1}}"#
            let batch = try await api.send(
                .post,
                "/v3/push/batch/regid/single",
                auth: app.auth,
                json: #"{"pushlist": {"cid-1": {"target": "\#(device.registrationID)", "platform": "all", "notification": {"ios": \#(ios)}}}}"#
            )
            #expect(batch.body.contains("notification.ios.notification_config"), "\(batch.body)")
            #expect(batch.body.contains("\(HeraldError.Code.unsupportedKey.rawValue)"), "\(batch.body)")
            let schedule = try await api.send(
                .post,
                "/v3/schedules",
                auth: app.auth,
                json: #"{"name": "n", "enabled": true, "trigger": {"single": {"time": "2099-01-01 00:00:00"}}, "#
                    + #""push": {"platform": "all", "audience": "all", "notification": {"ios": \#(ios)}}}"#
            )
            #expect(schedule.errorCode == HeraldError.Code.unsupportedKey.rawValue, "\(schedule.body)")
            #expect(try await api.send(.get, "/v3/schedules", auth: app.auth).json["total_count"] as? Int == 0)
        }
    }
}
