import Foundation

/// The kind of an ActivityKit token the sandbox knows (``APNsSandbox/registerLiveActivityToken(_:topic:kind:)``).
public enum SandboxLiveActivityToken: String, Sendable, Hashable {
    /// `Activity<Attributes>.pushToStartToken`: takes `start` events only.
    case pushToStart
    /// `activity.pushToken` of one running activity: takes `update` and `end` events.
    case update
}

/// Apple's rules for Live Activity pushes ("Starting and updating Live Activities with
/// ActivityKit push notifications"): push type `liveactivity` with topic
/// `<bundle id>.push-type.liveactivity`, and an `aps` with `timestamp` and `event`;
/// `content-state` for an update (and a start), `attributes-type` and `attributes` for a start.
///
/// APNs itself rejects a topic that doesn't suit the push type (BadTopic) and a token not
/// issued for the topic (DeviceTokenNotForTopic). A payload missing a field it answers 200
/// and the device drops without a word; the sandbox refuses it instead, with its own reason
/// ``invalidPayloadReason``, so a provider's mistake shows in its tests.
extension SandboxState {
    static let liveActivityTopicSuffix = ".push-type.liveactivity"
    /// The sandbox's reason for a Live Activity payload the device would drop.
    public static let invalidPayloadReason = "InvalidLiveActivityPayload"

    /// BadTopic for a `liveactivity` push whose topic lacks the suffix, or another push
    /// type on a Live Activity topic.
    static func liveActivityTopicRejection(pushType: String, topic: String?) -> String? {
        guard let topic else { return nil }
        return (pushType == "liveactivity") != topic.hasSuffix(liveActivityTopicSuffix) ? "BadTopic" : nil
    }

    /// The bundle id a topic is for: the topic without its push type's suffix.
    static func bundleID(ofTopic topic: String) -> String {
        for suffix in [".voip", liveActivityTopicSuffix] where topic.hasSuffix(suffix) {
            return String(topic.dropLast(suffix.count))
        }
        return topic
    }

    /// Why the device would drop this Live Activity payload, if it would; the event must
    /// suit the kind of a known token (DeviceTokenNotForTopic).
    func liveActivityPayloadRejection(_ body: [UInt8], token: String) -> String? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let aps = object["aps"] as? [String: Any]
        else { return Self.invalidPayloadReason }
        guard aps["timestamp"] is NSNumber, let event = aps["event"] as? String, ["start", "update", "end"].contains(event) else {
            return Self.invalidPayloadReason
        }
        if event != "end", !(aps["content-state"] is [String: Any]) { return Self.invalidPayloadReason }
        if event == "start", !(aps["attributes-type"] is String) || !(aps["attributes"] is [String: Any]) {
            return Self.invalidPayloadReason
        }
        if let kind = liveActivityTokens[token], (kind == .pushToStart) != (event == "start") { return "DeviceTokenNotForTopic" }
        return nil
    }
}
