import Foundation

/// One payload from Herald's long connection, parsed: the events it means, and, when part
/// or all of it was left out, why. The one entry for what arrives over the connection
/// (the fuzzer's too): whatever the bytes, it returns, never traps.
public struct ParsedPayload: Sendable, Hashable {
    /// The message it names, when that much could be read.
    public var messageID: String?
    public var events: [HeraldEvent]
    /// Why the payload, or a part of it (a broken `notification_config`), was left out.
    public var dropped: String?

    /// The largest payload read: Herald's copies are a few KiB at most (an inbox copy with
    /// every language of a push); anything larger is not Herald's and is not parsed.
    public static let maxBytes = 64 * 1024

    /// Parses `bytes`, the notification in `language` when it has localizations.
    public init(_ bytes: some Collection<UInt8>, language: String? = nil) {
        guard bytes.count <= Self.maxBytes else {
            self.init(messageID: nil, events: [], dropped: "a payload of \(bytes.count) bytes, over \(Self.maxBytes)")
            return
        }
        let data = Data(bytes)
        do {
            let payload = try JSONDecoder().decode(PushPayload.self, from: data)
            let events = payload.events(language: language)
            var dropped = payload.configProblem.map { "notification_config: \($0)" }
            if events.isEmpty, dropped == nil { dropped = "nothing this SDK knows in a payload of type \(payload.type)" }
            self.init(messageID: payload.msgID, events: events, dropped: dropped)
        } catch {
            let header = try? JSONDecoder().decode(Header.self, from: data)
            self.init(messageID: header?.msgID, events: [], dropped: Self.describe(error))
        }
    }

    init(messageID: String?, events: [HeraldEvent], dropped: String?) {
        self.messageID = messageID
        self.events = events
        self.dropped = dropped
    }

    /// Just the msg_id, from a payload that doesn't parse as a whole.
    private struct Header: Decodable {
        var msgID: String?
        enum CodingKeys: String, CodingKey { case msgID = "msg_id" }
        init(from decoder: any Decoder) throws {
            msgID = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .msgID)
        }
    }

    /// A decoding error in a few words: where, and what was wrong.
    static func describe(_ error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            let text = keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.isEmpty ? "the payload" : String(text.drop { $0 == "." })
        }
        switch error as? DecodingError {
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)): not \(Self.name(type))"
        case .valueNotFound(let type, let context): return "\(path(context.codingPath)): null, not \(Self.name(type))"
        case .keyNotFound(let key, let context): return "\(path(context.codingPath + [key])): missing"
        case .dataCorrupted(let context): return "\(path(context.codingPath)): \(context.debugDescription.prefix(120))"
        default: return "not Herald's JSON"
        }
    }

    private static func name(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is UInt.Type: "an integer"
        case is Bool.Type: "a boolean"
        case is [String: Any].Type: "an object"
        case is [Any].Type: "an array"
        default: "a \(type)"
        }
    }
}
