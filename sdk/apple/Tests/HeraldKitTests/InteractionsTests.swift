import Foundation
import Logging
import Testing

@testable import HeraldKit

/// A tap, each action and a dismissal resolve to the routes the design documents'
/// `notification_config` names, with their receipts.
struct InteractionsTests {
    func notification() throws -> HeraldEvent.Notification {
        var userInfo = NotificationConfigTests.userInfo
        userInfo["herald"] = ["msg_id": "1810000000000000001", "identifier": "order-1"]
        userInfo["news_id"] = 134
        guard case .notification(let notification) = try #require(HeraldEvent.fromAPNs(userInfo: userInfo).first) else {
            throw HeraldClientError("not a notification")
        }
        return notification
    }

    @Test func aTapAndEachActionResolveToTheirRoutesWithTheirReceipts() throws {
        let receipts = ReceiptQueue(url: nil)
        let interactions = Interactions(receipts: receipts, logger: Logger(label: "test"))
        let notification = try notification()

        let tap = interactions.respond(Response(actionIdentifier: Response.defaultActionIdentifier), to: notification)
        #expect(tap.response == .opened)
        #expect(tap.route?.routerURL == "qq://detail/:id" && tap.route?.externalURL == "https://www.qq.com")
        #expect(tap.route?.parameters == ["detail_id": "111"])

        let see = interactions.respond(Response(actionIdentifier: "see", text: "hello"), to: notification)
        #expect(see.response == .action(identifier: "see", text: "hello"))
        #expect(see.route?.externalURL == "https://www.qq.com/")
        #expect(see.route?.parameters == ["detail_id": "111", "title_name": "input"])

        // An action the category doesn't name falls back to the default route.
        let other = interactions.respond(.action(identifier: "later", text: nil), to: notification)
        #expect(other.route?.externalURL == "https://www.qq.com")

        let dismissed = interactions.respond(Response(actionIdentifier: Response.dismissActionIdentifier), to: notification)
        #expect(dismissed.response == .dismissed && dismissed.route == nil)

        let queued = try receipts.pending().map { "\($0.kind.rawValue) \($0.action ?? "")" }
        #expect(queued == ["opened ", "action see", "action later", "dismissed "])
        #expect(try receipts.pending().allSatisfy { $0.msgID == "1810000000000000001" })
    }

    @Test func aNotificationNamingAKeptCategoryResolvesThroughTheStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("interactions-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = CategoryStore(directory: directory)
        var notification = try notification()
        _ = try store.save(try #require(notification.config))
        notification.config = nil
        let interactions = Interactions(categories: store, receipts: nil, logger: Logger(label: "test"))
        #expect(interactions.respond(.action(identifier: "see", text: nil), to: notification).route?.parameters?["title_name"] == "input")
    }

    @Test func aNotificationPostedForAConnectionCopyReadsBackAsTheSameNotification() throws {
        let notification = try notification()
        let events = HeraldEvent.fromAPNs(userInfo: notification.userInfo)
        #expect(events == [.notification(notification)])
        let interactions = Interactions(receipts: nil, logger: Logger(label: "test"))
        #expect(interactions.respond(.opened, userInfo: notification.userInfo)?.route?.toController == "DetailViewController")
        #expect(interactions.respond(.opened, userInfo: ["aps": ["alert": "not Herald's"]]) == nil)
    }
}
