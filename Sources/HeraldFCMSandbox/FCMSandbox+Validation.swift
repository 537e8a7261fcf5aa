import Foundation
import HeraldCore

extension FCMSandbox {
    /// A `messages:send` body that passed: its token and its `message`, as JSON.
    struct ValidatedMessage: Sendable {
        var token: String
        var message: [String: JSONAny]
    }

    /// Why a body was refused: FCM's message, and the field at fault when there is one.
    struct Problem: Error, CustomStringConvertible {
        var description: String
        var field: String?
    }

    static let messageKeys: Set<String> = [
        "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "token", "topic", "condition",
    ]
    static let notificationKeys: Set<String> = ["title", "body", "image"]
    static let androidKeys: Set<String> = [
        "collapse_key", "priority", "ttl", "restricted_package_name", "data", "notification", "fcm_options", "direct_boot_ok",
    ]
    static let androidNotificationKeys: Set<String> = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "body_loc_key", "body_loc_args", "title_loc_key",
        "title_loc_args", "channel_id", "ticker", "sticky", "event_time", "local_only", "notification_priority", "default_sound",
        "default_vibrate_timings", "default_light_settings", "vibrate_timings", "visibility", "notification_count",
        "light_settings", "image", "bypass_proxy_notification", "proxy",
    ]
    static let notificationPriorities: Set<String> = [
        "PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH", "PRIORITY_MAX",
    ]
    /// FCM's limit on a message's payload.
    static let maxPayload = 4096

    /// The body checked as FCM's v1 API documents it (`projects.messages`): a `message`
    /// with exactly one target, known fields only, `data` of strings without reserved keys,
    /// an Android part whose priority, TTL (a duration of at most 28 days) and notification
    /// fields are FCM's, and a payload of at most 4 KB.
    /// `keep`: return the message's fields (to record them); else only its token.
    static func validate(_ body: [UInt8], keep: Bool = true) -> Result<ValidatedMessage, Problem> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return .failure(Problem(description: "Invalid JSON payload received."))
        }
        for key in object.keys where key != "message" && key != "validate_only" {
            return .failure(Problem(description: "Invalid JSON payload received. Unknown name \"\(key)\": Cannot find field."))
        }
        guard let message = object["message"] as? [String: Any] else {
            return .failure(Problem(description: "Request contains an invalid argument.", field: "message"))
        }
        if let unknown = message.keys.first(where: { !messageKeys.contains($0) }) {
            return .failure(Problem(description: "Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message'"))
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets == ["token"] else {
            return .failure(Problem(description: "Exactly one of token, topic or condition must be set (the sandbox takes tokens)", field: "message"))
        }
        guard let token = message["token"] as? String, isTokenShaped(token) else {
            return .failure(Problem(description: "The registration token is not a valid FCM registration token", field: "message.token"))
        }
        var payload = 0
        if let problem = checkData(message["data"], field: "message.data", payload: &payload) { return .failure(problem) }
        if let notification = message["notification"] {
            guard let notification = notification as? [String: Any] else {
                return .failure(Problem(description: "not an object", field: "message.notification"))
            }
            if let problem = checkStrings(notification, allowed: notificationKeys, field: "message.notification", payload: &payload) {
                return .failure(problem)
            }
        }
        if let android = message["android"] {
            guard let android = android as? [String: Any] else { return .failure(Problem(description: "not an object", field: "message.android")) }
            if let unknown = android.keys.first(where: { !androidKeys.contains($0) }) {
                return .failure(Problem(description: "Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message.android'"))
            }
            if let priority = android["priority"], !(["NORMAL", "HIGH"] as [String]).contains(priority as? String ?? "") {
                return .failure(Problem(description: "Invalid value at 'message.android.priority'", field: "message.android.priority"))
            }
            if let ttl = android["ttl"] {
                guard let ttl = ttl as? String, let seconds = durationSeconds(ttl), seconds <= 2_419_200 else {
                    return .failure(Problem(description: "Invalid value at 'message.android.ttl' (Duration)", field: "message.android.ttl"))
                }
            }
            if let key = android["collapse_key"], !(key is String) {
                return .failure(Problem(description: "Invalid value at 'message.android.collapse_key'", field: "message.android.collapse_key"))
            }
            if let problem = checkData(android["data"], field: "message.android.data", payload: &payload) { return .failure(problem) }
            if let notification = android["notification"] {
                guard let notification = notification as? [String: Any] else {
                    return .failure(Problem(description: "not an object", field: "message.android.notification"))
                }
                if let unknown = notification.keys.first(where: { !androidNotificationKeys.contains($0) }) {
                    return .failure(
                        Problem(description: "Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message.android.notification'")
                    )
                }
                if let priority = notification["notification_priority"], !notificationPriorities.contains(priority as? String ?? "") {
                    return .failure(
                        Problem(
                            description: "Invalid value at 'message.android.notification.notification_priority'",
                            field: "message.android.notification.notification_priority"
                        )
                    )
                }
                for (key, value) in notification where value is String { payload += key.utf8.count + (value as! String).utf8.count }
            }
        }
        guard payload <= maxPayload else { return .failure(Problem(description: "Message is too big", field: "message")) }
        return .success(ValidatedMessage(token: token, message: keep ? message.mapValues(JSONAny.init) : [:]))
    }

    /// FCM registration tokens: URL-safe characters (and `:`), long.
    static func isTokenShaped(_ token: String) -> Bool {
        (20...4096).contains(token.utf8.count)
            && token.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
                case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"): true
                default: false
                }
            }
    }

    /// A protobuf Duration in JSON: seconds with up to nine decimals, then `s`.
    static func durationSeconds(_ text: String) -> Double? {
        guard text.hasSuffix("s") else { return nil }
        let number = text.dropLast()
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].allSatisfy(\.isNumber),
            parts.count == 1 || (1...9).contains(parts[1].count) && parts[1].allSatisfy(\.isNumber)
        else { return nil }
        return Double(number)
    }

    static func checkData(_ value: Any?, field: String, payload: inout Int) -> Problem? {
        guard let value else { return nil }
        guard let data = value as? [String: Any] else { return Problem(description: "not an object", field: field) }
        for (key, value) in data {
            guard let text = value as? String else {
                return Problem(description: "Invalid value at '\(field)[\(key)]' (TYPE_STRING)", field: field)
            }
            if key == "from" || key == "notification" || key == "message_type" || key.hasPrefix("google") || key.hasPrefix("gcm") {
                return Problem(description: "Invalid data payload key: \(key)", field: field)
            }
            payload += key.utf8.count + text.utf8.count
        }
        return nil
    }

    static func checkStrings(_ object: [String: Any], allowed: Set<String>, field: String, payload: inout Int) -> Problem? {
        for (key, value) in object {
            guard allowed.contains(key) else {
                return Problem(description: "Invalid JSON payload received. Unknown name \"\(key)\" at '\(field)'", field: field)
            }
            guard let text = value as? String else { return Problem(description: "Invalid value at '\(field).\(key)'", field: field) }
            payload += key.utf8.count + text.utf8.count
        }
        return nil
    }
}

/// A JSON value as the sandbox recorded it (Sendable, comparable in tests).
public indirect enum JSONAny: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONAny])
    case object([String: JSONAny])

    init(_ value: Any) {
        switch value {
        case let text as String: self = .string(text)
        case let flag as Bool where type(of: value) == Bool.self: self = .bool(flag)
        case let number as NSNumber: self = .number(number.doubleValue)
        case let array as [Any]: self = .array(array.map(JSONAny.init))
        case let object as [String: Any]: self = .object(object.mapValues(JSONAny.init))
        default: self = .null
        }
    }

    /// As HeraldCore's JSON value, to write.
    var jsonValue: JSONValue {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? .int(Int64(value)) : .double(value)
        case .string(let value): .string(value)
        case .array(let values): .array(values.map(\.jsonValue))
        case .object(let object): .object(object.mapValues(\.jsonValue))
        }
    }

    public subscript(key: String) -> JSONAny? {
        if case .object(let object) = self { object[key] } else { nil }
    }

    public var string: String? {
        if case .string(let text) = self { text } else { nil }
    }
}
