import Foundation
import HeraldCore
import Testing

/// Issue #20's iOS fields as APNs and devices get them, byte for byte, and kept by the
/// stored request.
@Suite struct RichContentRenderingTests {
    static let rich =
        #"{"audience":"all","notification":{"ios":{"alert":{"title":"T","loc-key":"K","loc-args":["a"]},"#
        + #""sound":{"critical":1,"name":"alarm.caf","volume":0.5},"media_url":"https://cdn.example.com/v.mp4","#
        + #""relevance-score":0.75,"target-content-id":"inbox","filter-criteria":"work","#
        + #""extras":{"n":134,"list":[1,"a",true],"obj":{"id":7},"notification_config":"dropped"},"#
        + #""localizations":{"zh-Hans":{"title":"标题","body":"正文"},"en":"Hello"}}}}"#

    static func push(_ json: String) throws -> (PushRequest, Push) {
        let request = try JSONDecoder().decode(PushRequest.self, from: Data(json.utf8))
        return (request, try request.validated())
    }

    @Test func theAPNsPayloadCarriesEveryRichFieldWithSortedKeys() throws {
        let (_, push) = try Self.push(Self.rich)
        let payload = String(decoding: PushRendering.apnsPayload(push.localized(for: nil), msgID: "m"), as: UTF8.self)
        #expect(
            payload
                == #"{"aps":{"alert":{"loc-args":["a"],"loc-key":"K","title":"T"},"filter-criteria":"work","mutable-content":1,"#
                + #""relevance-score":0.75,"sound":{"critical":1,"name":"alarm.caf","volume":0.5},"target-content-id":"inbox"},"#
                + #""herald":{"identifier":"m","media_url":"https://cdn.example.com/v.mp4","msg_id":"m"},"list":[1,"a",true],"n":134,"#
                + #""obj":{"id":7}}"#
        )
        let chinese = String(decoding: PushRendering.apnsPayload(push.localized(for: "zh-Hans-CN"), msgID: "m"), as: UTF8.self)
        #expect(chinese.hasPrefix(#"{"aps":{"alert":{"body":"正文","title":"标题"},"filter-criteria""#), "\(chinese)")
        let english = String(decoding: PushRendering.apnsPayload(push.localized(for: "en-US"), msgID: "m"), as: UTF8.self)
        #expect(english.hasPrefix(#"{"aps":{"alert":"Hello","filter-criteria""#), "\(english)")
    }

    @Test func theStoredRequestKeepsTheRichFieldsAndTheCategoryConfiguration() throws {
        let (request, _) = try Self.push(Self.rich)
        let config = NotificationCategory(identifier: "push_extension_a", actions: [CategoryAction(identifier: "x", title: "X")]).config(version: 3)
        let carrying = request.carrying(categoryConfig: config)
        let stored = try JSONDecoder().decode(PushRequest.self, from: Data(carrying.storedJSON))
        #expect(stored == carrying)
        #expect(stored.notification?.ios?.notificationConfig == config)
        #expect(stored.notification?.ios?.localizations?.count == 2)
    }

    @Test func aBackgroundPushIsNeverMutableContent() throws {
        let (request, _) = try Self.push(#"{"audience":"all","notification":{"ios":{"content-available":1}}}"#)
        let config = NotificationCategory(identifier: "c").config(version: 1)
        let push = try request.carrying(categoryConfig: config).validated()
        #expect(push.isCategoryDelivery)
        #expect(push.pushType == .background)
        #expect(
            String(decoding: PushRendering.apnsPayload(push, msgID: "m"), as: UTF8.self)
                == #"{"aps":{"content-available":1},"herald":{"identifier":"m","msg_id":"m"},"notification_config":{"actions":[],"identifier":"c","version":1}}"#
        )
    }
}
