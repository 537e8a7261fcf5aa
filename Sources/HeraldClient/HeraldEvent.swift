import DequeModule
import Foundation

/// What the SDK hands the app.
public enum HeraldEvent: Sendable, Hashable {
    /// A notification to show.
    case notification(Notification)
    /// An in-app message (never shown by the system).
    case message(Message)
    /// Remove the shown notifications with these identifiers.
    case recall(identifiers: [String])
    /// Replace the notification with this identifier by new content.
    case replace(identifier: String, notification: Notification)
    /// The connection is up.
    case connected
    /// The connection is down; the SDK reconnects by itself.
    case disconnected

    public struct Notification: Sendable, Hashable {
        public var messageID: String
        /// The notification's identifier on the device (replace and recall refer to it).
        public var identifier: String
        public var title: String?
        public var alert: String?
        public var badge: Int?
        public var extras: [String: String]
    }

    public struct Message: Sendable, Hashable {
        public var messageID: String
        public var content: String
        public var title: String?
        public var contentType: String?
        public var extras: [String: String]
    }
}

/// The JSON Herald publishes on `herald/<registration id>/push` (docs/protocol.md).
struct PushPayload: Decodable {
    struct NotificationBody: Decodable {
        var alert: String?
        var title: String?
        var badge: Int?
        var extras: [String: String]?
    }

    struct MessageBody: Decodable {
        var msgContent: String
        var title: String?
        var contentType: String?
        var extras: [String: String]?

        enum CodingKeys: String, CodingKey {
            case title, extras
            case msgContent = "msg_content"
            case contentType = "content_type"
        }
    }

    var type: String
    var msgID: String
    var identifier: String?
    var identifiers: [String]?
    var notification: NotificationBody?
    var message: MessageBody?

    enum CodingKeys: String, CodingKey {
        case type, identifier, identifiers, notification, message
        case msgID = "msg_id"
    }

    /// The events this payload means: a notification (or a replace), an in-app message,
    /// both, or a recall; none for a type this SDK doesn't know.
    var events: [HeraldEvent] {
        func notification(_ body: NotificationBody) -> HeraldEvent.Notification {
            .init(
                messageID: msgID,
                identifier: identifier ?? msgID,
                title: body.title,
                alert: body.alert,
                badge: body.badge,
                extras: body.extras ?? [:]
            )
        }
        var events: [HeraldEvent] = []
        switch type {
        case "notification":
            if let body = self.notification { events.append(.notification(notification(body))) }
        case "replace":
            if let identifier, let body = self.notification { events.append(.replace(identifier: identifier, notification: notification(body))) }
        case "recall":
            if let identifiers { events.append(.recall(identifiers: identifiers)) }
            return events
        case "message":
            break
        default:
            return []
        }
        if let message {
            events.append(
                .message(
                    .init(
                        messageID: msgID,
                        content: message.msgContent,
                        title: message.title,
                        contentType: message.contentType,
                        extras: message.extras ?? [:]
                    )
                )
            )
        }
        return events
    }
}

/// Message ids already handed to the app, so a message replayed after a reconnect is
/// acknowledged again but not shown twice. Remembers the most recent `capacity` ids.
struct MessageDeduplicator: Sendable {
    private var seen: Set<String> = []
    private var order: Deque<String> = []
    let capacity: Int

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// True the first time `id` is seen.
    mutating func firstTime(_ id: String) -> Bool {
        guard seen.insert(id).inserted else { return false }
        order.append(id)
        while order.count > capacity, let oldest = order.popFirst() { seen.remove(oldest) }
        return true
    }
}
