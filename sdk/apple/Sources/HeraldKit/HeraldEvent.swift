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
    /// A category's configuration sent ahead (`POST /v3/categories/{id}/deliver`):
    /// register it, and report its version.
    case categoryConfig(NotificationConfig)
    /// The connection is up.
    case connected
    /// The connection is down; the SDK reconnects by itself (in the foreground).
    case disconnected
    /// The gateway refused the device in a way retrying can't cure (a wrong secret, a
    /// deleted device or app): the client stopped, and this is the last event.
    case stopped(HeraldRefusal)

    public struct Notification: Sendable, Hashable {
        public var messageID: String
        /// The notification's identifier on the device (replace and recall refer to it).
        public var identifier: String
        public var title: String?
        public var subtitle: String? = nil
        public var alert: String?
        public var badge: Int?
        /// A sound's name (a critical alert's too).
        public var sound: String? = nil
        /// The category (`aps.category`) it shows with.
        public var category: String? = nil
        /// The extras; a value that isn't a string is given as its JSON text (`134`,
        /// `{"id":1}`).
        public var extras: [String: String]
        /// The category the notification shows with, its actions and routes, when the push
        /// named one defined on the server.
        public var config: NotificationConfig? = nil
        /// An image, GIF, audio or video to attach.
        public var mediaURL: String? = nil
    }

    public struct Message: Sendable, Hashable {
        public var messageID: String
        public var content: String
        public var title: String?
        public var contentType: String?
        /// The extras; a value that isn't a string is given as its JSON text.
        public var extras: [String: String]
    }
}

/// The JSON Herald publishes on `herald/<registration id>/push` (docs/protocol.md).
struct PushPayload: Decodable {
    struct NotificationBody: Decodable {
        var alert: String?
        var title: String?
        var subtitle: String?
        var badge: Int?
        var sound: Sound?
        var category: String?
        var extras: Extras?
        var mediaURL: String?
        var notificationConfig: NotificationConfig?
        /// A copy kept in the inbox carries every language: the SDK chooses.
        var localizations: [String: LocalizedAlert]?

        /// Why `notification_config` was left out (it doesn't parse): the notification
        /// shows without its category.
        var configProblem: String?

        enum CodingKeys: String, CodingKey {
            case alert, title, subtitle, badge, sound, category, extras, localizations
            case mediaURL = "media_url"
            case notificationConfig = "notification_config"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            alert = try container.decodeIfPresent(String.self, forKey: .alert)
            title = try container.decodeIfPresent(String.self, forKey: .title)
            subtitle = try container.decodeIfPresent(String.self, forKey: .subtitle)
            badge = try container.decodeIfPresent(Int.self, forKey: .badge)
            sound = try container.decodeIfPresent(Sound.self, forKey: .sound)
            category = try container.decodeIfPresent(String.self, forKey: .category)
            extras = try container.decodeIfPresent(Extras.self, forKey: .extras)
            mediaURL = try container.decodeIfPresent(String.self, forKey: .mediaURL)
            localizations = try container.decodeIfPresent([String: LocalizedAlert].self, forKey: .localizations)
            (notificationConfig, configProblem) = NotificationConfig.lenient(container, .notificationConfig)
        }

        /// The body for a device of `language`: the alert of its language, if the push has one.
        func localized(for language: String?) -> NotificationBody {
            guard let localizations, let key = LocalizedAlert.match(language, in: Array(localizations.keys)),
                let chosen = localizations[key]
            else { return self }
            var body = self
            body.title = chosen.title
            body.alert = chosen.body
            return body
        }
    }

    struct MessageBody: Decodable {
        var msgContent: String
        var title: String?
        var contentType: String?
        var extras: Extras?

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
    var notificationConfig: NotificationConfig?
    /// Why a `notification_config` (the payload's or its notification's) was left out.
    var configProblem: String?

    enum CodingKeys: String, CodingKey {
        case type, identifier, identifiers, notification, message
        case msgID = "msg_id"
        case notificationConfig = "notification_config"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        msgID = try container.decode(String.self, forKey: .msgID)
        identifier = try container.decodeIfPresent(String.self, forKey: .identifier)
        identifiers = try container.decodeIfPresent([String].self, forKey: .identifiers)
        notification = try container.decodeIfPresent(NotificationBody.self, forKey: .notification)
        message = try container.decodeIfPresent(MessageBody.self, forKey: .message)
        (notificationConfig, configProblem) = NotificationConfig.lenient(container, .notificationConfig)
        configProblem = configProblem ?? notification?.configProblem
    }

    /// The events this payload means: a notification (or a replace), an in-app message,
    /// both, or a recall; none for a type this SDK doesn't know.
    func events(language: String? = nil) -> [HeraldEvent] {
        func notification(_ body: NotificationBody) -> HeraldEvent.Notification {
            let body = body.localized(for: language)
            return .init(
                messageID: msgID,
                identifier: identifier ?? msgID,
                title: body.title,
                subtitle: body.subtitle,
                alert: body.alert,
                badge: body.badge,
                sound: body.sound?.name,
                category: body.category ?? body.notificationConfig?.identifier,
                extras: body.extras?.values ?? [:],
                config: body.notificationConfig,
                mediaURL: body.mediaURL
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
        case "category_config":
            return notificationConfig.map { [.categoryConfig($0)] } ?? []
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
                        extras: message.extras?.values ?? [:]
                    )
                )
            )
        }
        return events
    }
}

/// A notification's sound: a name, or a critical alert's object (`{"critical": 1, "name":
/// …, "volume": …}`).
struct Sound: Decodable {
    var name: String?

    init(from decoder: any Decoder) throws {
        if let name = try? decoder.singleValueContainer().decode(String.self) {
            self.name = name
        } else {
            name = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .name)
        }
    }

    enum CodingKeys: String, CodingKey { case name }
}

/// Extras as the app gets them: strings as they are, any other JSON value (Herald passes
/// on numbers, booleans, arrays and objects, as JPush does) as its JSON text.
struct Extras: Decodable {
    var values: [String: String]

    init(from decoder: any Decoder) throws {
        let fields = try decoder.singleValueContainer().decode([String: ExtraValue].self)
        values = fields.mapValues(\.text)
    }

    /// One value, kept as text.
    struct ExtraValue: Decodable {
        var text: String

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let string = try? container.decode(String.self) {
                text = string
            } else {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                text = String(decoding: try encoder.encode(container.decode(AnyJSON.self)), as: UTF8.self)
            }
        }
    }

    /// Any JSON value, decoded to be written again.
    enum AnyJSON: Codable {
        case null
        case bool(Bool)
        case number(Double)
        case integer(Int64)
        case string(String)
        case array([AnyJSON])
        case object([String: AnyJSON])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .integer(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([AnyJSON].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: AnyJSON].self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let value): try container.encode(value)
            case .number(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .object(let value): try container.encode(value)
            }
        }
    }
}
