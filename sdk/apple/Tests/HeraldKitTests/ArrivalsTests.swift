import Foundation
import Logging
import Testing

@testable import HeraldKit

/// What the app would show, remove, register and hand over, for what arrives over the
/// connection and through APNs, checked with a presenter that records.
struct ArrivalsTests {
    /// The notification system as a list: what is shown now, by identifier.
    actor Recorder: Presenter {
        var shown: [String: HeraldEvent.Notification] = [:]
        var posts: [(identifier: String, replacing: Bool)] = []
        var removed: [[String]] = []
        var registered: [String] = []
        var messages: [String] = []

        func show(_ notification: HeraldEvent.Notification, replacing: Bool) {
            shown[notification.identifier] = notification
            posts.append((notification.identifier, replacing))
        }

        func remove(identifiers: [String]) {
            removed.append(identifiers)
            for identifier in identifiers { shown[identifier] = nil }
        }

        func register(_ categories: [NotificationConfig]) { registered += categories.map(\.identifier) }
        func deliver(_ message: HeraldEvent.Message) { messages.append(message.messageID) }
        func setBadge(_ count: Int) {}
    }

    func arrivals(_ recorder: Recorder) -> Arrivals {
        Arrivals(ledger: InMemoryLedgerStore(), presenter: recorder, logger: Logger(label: "test"))
    }

    /// A message's copy over the connection, as Herald publishes it.
    func overConnection(_ json: String) throws -> [HeraldEvent] {
        try JSONDecoder().decode(PushPayload.self, from: Data(json.utf8)).events()
    }

    /// The same message's APNs notification.
    static func apns(msgID: String, identifier: String, body: String) -> [AnyHashable: Any] {
        [
            "aps": ["alert": ["title": "Sale", "body": body], "badge": 3, "sound": "default"] as [String: Any],
            "herald": ["msg_id": msgID, "identifier": identifier],
            "news_id": 134,
        ]
    }

    @Test func theConnectionsCopyAndTheAPNsCopyOfAMessageAreShownOnceWhicheverComesFirst() async throws {
        let recorder = Recorder()
        let arrivals = arrivals(recorder)
        let tcp = try overConnection(
            #"{"type": "notification", "msg_id": "1", "identifier": "sale", "notification": {"title": "Sale", "alert": "50% off"}}"#
        )
        #expect(await arrivals.handle(tcp, via: .connection).count == 1)
        #expect(await arrivals.handle(HeraldEvent.fromAPNs(userInfo: Self.apns(msgID: "1", identifier: "sale", body: "50% off")), via: .apns).isEmpty)
        // The other way round.
        #expect(await arrivals.handle(HeraldEvent.fromAPNs(userInfo: Self.apns(msgID: "2", identifier: "two", body: "b")), via: .apns).count == 1)
        let again = try overConnection(#"{"type": "notification", "msg_id": "2", "identifier": "two", "notification": {"alert": "b"}}"#)
        #expect(await arrivals.handle(again, via: .connection).isEmpty)
        #expect(await recorder.posts.map(\.identifier) == ["sale", "two"])
    }

    /// A push with a notification and an in-app message is one arrival: both are carried
    /// out, and neither again when the message's other copy comes.
    @Test func aNotificationAndItsInAppMessageArriveTogether() async throws {
        let recorder = Recorder()
        let arrivals = arrivals(recorder)
        let both = #"{"type": "notification", "msg_id": "3", "notification": {"alert": "x"}, "message": {"msg_content": "m"}}"#
        #expect(await arrivals.receive(connectionPayload: Array(both.utf8)).count == 2)
        #expect(await recorder.messages == ["3"])
        #expect(await arrivals.receive(connectionPayload: Array(both.utf8)).isEmpty)
    }

    @Test func everyFieldOfAnAPNsNotificationArrives() throws {
        var userInfo = Self.apns(msgID: "7", identifier: "order-7", body: "Shipped")
        userInfo["aps"] =
            [
                "alert": ["title": "Order", "subtitle": "No. 7", "body": "Shipped"], "badge": 2, "sound": ["critical": 1, "name": "alarm.caf"],
                "category": "push_extension_category1", "mutable-content": 1,
            ] as [String: Any]
        userInfo["herald"] = ["msg_id": "7", "identifier": "order-7", "media_url": "https://cdn.example.com/a.jpg"]
        userInfo["notification_config"] = NotificationConfigTests.userInfo["notification_config"]
        let events = HeraldEvent.fromAPNs(userInfo: userInfo)
        guard case .notification(let notification) = try #require(events.first) else {
            Issue.record("not a notification: \(events)")
            return
        }
        #expect(notification.messageID == "7" && notification.identifier == "order-7")
        #expect(notification.title == "Order" && notification.subtitle == "No. 7" && notification.alert == "Shipped")
        #expect(notification.badge == 2 && notification.sound == "alarm.caf")
        #expect(notification.category == "push_extension_category1")
        #expect(notification.config?.actions.first?.extensionOption == 2)
        #expect(notification.mediaURL == "https://cdn.example.com/a.jpg")
        #expect(notification.extras == ["news_id": "134"])
    }

    @Test func aRecallRemovesExactlyTheNamedIdentifiersOverEitherChannel() async throws {
        let recorder = Recorder()
        let arrivals = arrivals(recorder)
        for (id, identifier) in [("1", "a"), ("2", "b"), ("3", "c")] {
            let events = try overConnection(
                #"{"type": "notification", "msg_id": "\#(id)", "identifier": "\#(identifier)", "notification": {"alert": "x"}}"#
            )
            await arrivals.handle(events, via: .connection)
        }
        await arrivals.handle(try overConnection(#"{"type": "recall", "msg_id": "9", "identifiers": ["a"]}"#), via: .connection)
        #expect(await Set(recorder.shown.keys) == ["b", "c"])
        // The silent APNs recall: every identifier still pending recall for the device.
        let silent: [AnyHashable: Any] = [
            "aps": ["content-available": 1], "herald-recall": ["c"], "herald": ["type": "recall", "msg_id": "10"],
        ]
        await arrivals.handle(HeraldEvent.fromAPNs(userInfo: silent), via: .apns)
        #expect(await Set(recorder.shown.keys) == ["b"])
        #expect(await recorder.removed == [["a"], ["c"]])
    }

    @Test func aReplaceRepostsUnderTheSameIdentifier() async throws {
        let recorder = Recorder()
        let arrivals = arrivals(recorder)
        await arrivals.handle(
            try overConnection(#"{"type": "notification", "msg_id": "1", "identifier": "score", "notification": {"alert": "1-0"}}"#),
            via: .connection
        )
        await arrivals.handle(
            try overConnection(#"{"type": "replace", "msg_id": "2", "identifier": "score", "notification": {"alert": "2-0"}}"#),
            via: .connection
        )
        #expect(await recorder.shown.count == 1)
        #expect(await recorder.shown["score"]?.alert == "2-0")
        #expect(await recorder.posts.map(\.replacing) == [false, true])
    }

    @Test func categoriesAreRegisteredAndThePersistentOnesKept() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("arrivals-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = Recorder()
        let store = CategoryStore(directory: directory)
        let arrivals = Arrivals(ledger: InMemoryLedgerStore(), presenter: recorder, categories: store, logger: Logger(label: "test"))
        var userInfo = Self.apns(msgID: "5", identifier: "five", body: "b")
        userInfo["notification_config"] = NotificationConfigTests.userInfo["notification_config"]
        await arrivals.handle(HeraldEvent.fromAPNs(userInfo: userInfo), via: .apns)
        let ahead = try overConnection(#"{"type": "category_config", "msg_id": "6", "notification_config": {"identifier": "sale", "version": 2}}"#)
        await arrivals.handle(ahead, via: .connection)
        #expect(await recorder.registered == ["push_extension_category1", "sale"])
        #expect(Array(store.load().keys) == ["push_extension_category1"])
    }

    @Test func hostileAPNsPayloadsAreDroppedWithTheReasonNeverACrash() {
        let cases: [(userInfo: [AnyHashable: Any], reason: String?)] = [
            (["aps": ["alert": 42], "herald": ["msg_id": "1"]], "aps.alert is neither text nor an object of texts"),
            (["aps": ["alert": "x"], "herald": ["msg_id": "1"], "herald-recall": "a"], "herald-recall is not a list of identifiers"),
            (["aps": ["alert": "x"], "herald": ["msg_id": "1"], "herald-recall": [1, 2]], "herald-recall is not a list of identifiers"),
            (
                ["aps": ["content-available": 1], "herald": ["msg_id": "1"], "notification_config": ["identifier": 5]],
                "notification_config does not parse"
            ),
            (["aps": "nope", "herald": "nope"], nil),
            (["herald": ["msg_id": 12]], nil),
            ([:], nil),
        ]
        for (userInfo, reason) in cases {
            var reasons: [String] = []
            let events = HeraldEvent.fromAPNs(userInfo: userInfo) { reasons.append($0) }
            #expect(events.isEmpty, "\(userInfo)")
            #expect(reasons.first == reason, "\(userInfo)")
        }
    }

    @Test func hostileConnectionPayloadsAreDroppedWithAReceiptSayingWhyNeverACrash() async throws {
        let cases: [(payload: String, msgID: String?, reason: String)] = [
            (#"{"type": "notification", "msg_id": 5}"#, nil, "msg_id: not a string"),
            (#"{"type": ["x"], "msg_id": "1"}"#, "1", "type: not a string"),
            (#"{"type": "notification", "msg_id": "2", "notification": {"badge": "many"}}"#, "2", "notification.badge: not an integer"),
            ("[1, 2, 3]", nil, "the payload: not a"),
            (String(repeating: "[", count: 60_000), nil, "the payload: "),
            (#"{"type": "notification", "msg_id": "3", "notification": {"alert": "x"}"#, nil, "the payload: "),
            (#"{"type": "hologram", "msg_id": "4"}"#, "4", "nothing this SDK knows in a payload of type hologram"),
            (String(repeating: " ", count: ParsedPayload.maxBytes + 1), nil, "a payload of 65537 bytes, over 65536"),
        ]
        for (payload, msgID, reason) in cases {
            let parsed = ParsedPayload(Array(payload.utf8))
            #expect(parsed.events.isEmpty, "\(payload.prefix(80))")
            #expect(parsed.messageID == msgID, "\(payload.prefix(80))")
            #expect(parsed.dropped?.hasPrefix(reason) == true, "\(payload.prefix(80)): \(parsed.dropped ?? "-")")
        }
        // A broken category: the notification shows without it, and the receipt says why.
        let receipts = ReceiptQueue(url: nil)
        let recorder = Recorder()
        let arrivals = Arrivals(ledger: InMemoryLedgerStore(), presenter: recorder, receipts: receipts, logger: Logger(label: "test"))
        let broken = #"{"type": "notification", "msg_id": "5", "notification": {"alert": "x", "notification_config": {"identifier": 3}}}"#
        #expect(await arrivals.receive(connectionPayload: Array(broken.utf8)).count == 1)
        await arrivals.receive(connectionPayload: Array(#"{"type": "notification", "msg_id": "6", "notification": []}"#.utf8))
        let sent = try receipts.pending().map { "\($0.msgID) \($0.kind.rawValue) \($0.reason ?? "")" }
        #expect(
            sent == [
                "5 dropped notification_config: notification.notification_config.identifier: not a string", "5 displayed ",
                "6 dropped notification: not an object",
            ],
            "\(sent)"
        )
        #expect(await recorder.posts.map(\.identifier) == ["5"])
        // Unknown fields are ignored.
        let future = #"{"type": "notification", "msg_id": "7", "future": {"x": 1}, "notification": {"alert": "x", "colour": "red"}}"#
        let parsed = ParsedPayload(Array(future.utf8))
        #expect(parsed.events.count == 1 && parsed.dropped == nil)
    }

    @Test func aDroppedAPNsNotificationQueuesItsReason() async throws {
        let receipts = ReceiptQueue(url: nil)
        let arrivals = Arrivals(ledger: InMemoryLedgerStore(), presenter: Recorder(), receipts: receipts, logger: Logger(label: "test"))
        await arrivals.receive(apns: ["aps": ["alert": 42], "herald": ["msg_id": "8"]])
        #expect(try receipts.pending().map(\.reason) == ["aps.alert is neither text nor an object of texts"])
    }

    @Test func whatIsShownGetsADisplayedReceiptOnceWhicheverCopyCameFirst() async throws {
        let receipts = ReceiptQueue(url: nil)
        let arrivals = Arrivals(ledger: InMemoryLedgerStore(), presenter: Recorder(), receipts: receipts, logger: Logger(label: "test"))
        await arrivals.receive(apns: Self.apns(msgID: "9", identifier: "nine", body: "b"))
        await arrivals.receive(connectionPayload: Array(#"{"type": "notification", "msg_id": "9", "notification": {"alert": "b"}}"#.utf8))
        #expect(try receipts.pending().map { "\($0.msgID) \($0.kind)" } == ["9 displayed"])
        // Without a presenter nothing is shown, so nothing is displayed.
        let quiet = ReceiptQueue(url: nil)
        let reader = Arrivals(ledger: InMemoryLedgerStore(), presenter: nil, receipts: quiet, logger: Logger(label: "test"))
        #expect(await reader.receive(apns: Self.apns(msgID: "10", identifier: "ten", body: "b")).count == 1)
        #expect(try quiet.pending().isEmpty)
    }
}
