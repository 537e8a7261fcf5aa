extension PushRequest {
    /// Reads a request body in one pass, for the shapes pushes usually have, without
    /// JSONDecoder (whose containers and generic machinery cost more than the rest of
    /// accepting a push).
    ///
    /// Nil for anything it doesn't read exactly as JSONDecoder and the Codable conformance
    /// would: the caller then decodes with JSONDecoder, which also gives the error. So it
    /// never accepts what JSONDecoder refuses; it leaves out strings with escapes, `null`,
    /// numbers that aren't plain integers, repeated keys and unknown keys. A test holds it
    /// to JSONDecoder over every field and many malformed bodies.
    public static func fastRead(_ bytes: UnsafeRawBufferPointer) -> PushRequest? {
        var reader = FastJSONReader(bytes)
        var audience: PushAudience?
        var request = PushRequest(audience: .all)
        let read = reader.object(keys: ["audience", "notification", "message", "options", "cid"]) { reader, key in
            switch key {
            case 0:
                if reader.peek == UInt8(ascii: "\"") {
                    guard reader.string() == "all" else { return false }
                    audience = .all
                } else {
                    audience = reader.audienceFilter().map(PushAudience.filter)
                }
                return audience != nil
            case 1: return set(&request.notification, reader.notification())
            case 2: return set(&request.message, reader.inAppMessage())
            case 3: return set(&request.options, reader.options())
            default: return set(&request.cid, reader.string())
            }
        }
        guard read, reader.atEnd, let audience else { return nil }
        request.audience = audience
        return request
    }
}

/// Stores `value` in `field`; false when there is none (the body isn't read fast).
private func set<Value>(_ field: inout Value?, _ value: Value?) -> Bool {
    field = value
    return value != nil
}

/// The JSON reading behind ``PushRequest/fastRead(_:)``: every method returns nil (or
/// false) for what it doesn't read exactly as JSONDecoder would.
struct FastJSONReader {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var peek: UInt8? {
        mutating get {
            skipWhitespace()
            return index < bytes.count ? bytes[index] : nil
        }
    }

    /// Nothing but whitespace left.
    var atEnd: Bool {
        mutating get { peek == nil }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    /// An object whose keys are all in `keys`, each at most once; `value` reads the value
    /// of the key at the given position in `keys`.
    mutating func object(keys: [String], value: (inout FastJSONReader, Int) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        var seen = 0 as UInt32
        if take(UInt8(ascii: "}")) { return true }
        repeat {
            guard let key = string(), let position = keys.firstIndex(of: key), seen & (1 << position) == 0 else { return false }
            seen |= 1 << position
            guard take(UInt8(ascii: ":")), value(&self, position) else { return false }
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}"))
    }

    /// A string without escapes or control characters, in valid UTF-8.
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            guard byte >= 0x20, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// An integer written as one (no fraction, exponent or leading zero) that fits an Int.
    mutating func int() -> Int? {
        skipWhitespace()
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let start = index
        var value = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let digit = Int(bytes[index] - UInt8(ascii: "0"))
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(digit)
            guard !overflow, !overflow2 else { return nil }
            value = sum
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) { return nil }
        return negative ? -value : value
    }

    mutating func bool() -> Bool? {
        skipWhitespace()
        for (word, value) in [("true", true), ("false", false)] where bytes[index...].starts(with: word.utf8) {
            index += word.utf8.count
            return value
        }
        return nil
    }

    mutating func strings() -> [String]? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var values: [String] = []
        if take(UInt8(ascii: "]")) { return values }
        repeat {
            guard let value = string() else { return nil }
            values.append(value)
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) ? values : nil
    }

    /// An object of strings, each key once.
    mutating func stringMap() -> [String: String]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var values: [String: String] = [:]
        if take(UInt8(ascii: "}")) { return values }
        repeat {
            guard let key = string(), values[key] == nil, take(UInt8(ascii: ":")), let value = string() else { return nil }
            values[key] = value
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? values : nil
    }
}

extension FastJSONReader {
    fileprivate mutating func audienceFilter() -> AudienceFilter? {
        var filter = AudienceFilter()
        let read = object(keys: ["registration_id", "alias", "tag", "tag_and", "tag_not"]) { reader, key in
            guard let values = reader.strings() else { return false }
            switch key {
            case 0: filter.registrationID = values
            case 1: filter.alias = values
            case 2: filter.tag = values
            case 3: filter.tagAnd = values
            default: filter.tagNot = values
            }
            return true
        }
        return read ? filter : nil
    }

    fileprivate mutating func notification() -> PushNotification? {
        var notification = PushNotification()
        let read = object(keys: ["alert", "ios"]) { reader, key in
            key == 0 ? set(&notification.alert, reader.string()) : set(&notification.ios, reader.iosNotification())
        }
        return read ? notification : nil
    }

    private mutating func iosNotification() -> IOSNotification? {
        var ios = IOSNotification()
        let keys = [
            "alert", "sound", "badge", "thread-id", "category", "content-available", "mutable-content",
            "interruption-level", "extras", "push_type",
        ]
        let read = object(keys: keys) { reader, key in
            switch key {
            case 0:
                if reader.peek == UInt8(ascii: "\"") {
                    guard let text = reader.string() else { return false }
                    ios.alert = .text(text)
                } else {
                    var parts: [String?] = [nil, nil, nil]
                    let read = reader.object(keys: ["title", "subtitle", "body"]) { reader, part in
                        set(&parts[part], reader.string())
                    }
                    guard read else { return false }
                    ios.alert = .parts(title: parts[0], subtitle: parts[1], body: parts[2])
                }
                return true
            case 1: return set(&ios.sound, reader.string())
            case 2: return set(&ios.badge, reader.badge())
            case 3: return set(&ios.threadID, reader.string())
            case 4: return set(&ios.category, reader.string())
            case 5: return set(&ios.contentAvailable, reader.bool())
            case 6: return set(&ios.mutableContent, reader.bool())
            case 7: return set(&ios.interruptionLevel, reader.string())
            case 8: return set(&ios.extras, reader.stringMap())
            default: return set(&ios.pushType, reader.string().flatMap(IOSPushType.init(rawValue:)))
            }
        }
        return read ? ios : nil
    }

    /// A number at least 0, or "+N" / "-N" with N at most 99,999 (as ``IOSNotification/Badge`` decodes).
    private mutating func badge() -> IOSNotification.Badge? {
        if peek == UInt8(ascii: "\"") {
            guard let text = string(), let sign = text.first, sign == "+" || sign == "-",
                let amount = Int(text.dropFirst()), amount >= 0, amount <= 99_999
            else { return nil }
            return .change(sign == "+" ? amount : -amount)
        }
        guard let number = int(), number >= 0 else { return nil }
        return .set(number)
    }

    fileprivate mutating func inAppMessage() -> InAppMessage? {
        var fields: (content: String?, title: String?, contentType: String?, extras: [String: String]?) = (nil, nil, nil, nil)
        let read = object(keys: ["msg_content", "title", "content_type", "extras"]) { reader, key in
            switch key {
            case 0: return set(&fields.content, reader.string())
            case 1: return set(&fields.title, reader.string())
            case 2: return set(&fields.contentType, reader.string())
            default: return set(&fields.extras, reader.stringMap())
            }
        }
        guard read, let content = fields.content else { return nil }
        return InAppMessage(msgContent: content, title: fields.title, contentType: fields.contentType, extras: fields.extras)
    }

    fileprivate mutating func options() -> PushOptions? {
        var options = PushOptions()
        let read = object(keys: ["time_to_live", "identifier", "replace", "apns_production", "priority"]) { reader, key in
            switch key {
            case 0: return set(&options.timeToLive, reader.int())
            case 1: return set(&options.identifier, reader.string())
            case 2: return set(&options.replace, reader.string())
            case 3: return set(&options.apnsProduction, reader.bool())
            default: return set(&options.priority, reader.int())
            }
        }
        return read ? options : nil
    }
}
