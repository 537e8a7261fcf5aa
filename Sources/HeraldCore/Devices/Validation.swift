/// Validation of the values operators and devices send.
public enum Validation {
    /// A tag or alias: 1 to 40 bytes of UTF-8 with no control characters.
    public static func label(_ value: String, field: String) throws(HeraldError) -> String {
        if value.isEmpty { throw .invalidField(field, "must not be empty") }
        if value.utf8.count > Limits.maxTagOrAliasBytes {
            throw .limit(field, "at most \(Limits.maxTagOrAliasBytes) bytes (got \(value.utf8.count))")
        }
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .invalidField(field, "must not contain control characters")
        }
        return value
    }

    /// A list of tags, deduplicated in order, at most `max` long.
    public static func labels(_ values: [String], field: String, max: Int) throws(HeraldError) -> [String] {
        if values.count > max { throw .limit(field, "at most \(max) per request (got \(values.count))") }
        var seen = Set<String>()
        var result: [String] = []
        for (index, value) in values.enumerated() {
            let label = try label(value, field: "\(field)[\(index)]")
            if seen.insert(label).inserted { result.append(label) }
        }
        return result
    }

    /// Registration ids for a bulk call, deduplicated, at most `max` long.
    public static func registrationIDs(_ values: [String], field: String, max: Int = Limits.maxIDsPerBulkCall) throws(HeraldError) -> [String] {
        if values.count > max { throw .limit(field, "at most \(max) registration ids per request (got \(values.count))") }
        var seen = Set<String>()
        var result: [String] = []
        for (index, value) in values.enumerated() {
            guard Identifiers.isRegistrationID(value) else {
                throw .invalidField("\(field)[\(index)]", "not a registration id")
            }
            if seen.insert(value).inserted { result.append(value) }
        }
        return result
    }

    /// An APNs device or VoIP token: hex, 8 to 200 bytes, returned lowercase.
    public static func apnsToken(_ value: String, field: String) throws(HeraldError) -> String {
        guard let bytes = Hex.decode(value), (8...200).contains(bytes.count) else {
            throw .invalidField(field, "must be a hex string of 16 to 400 characters")
        }
        return Hex.encode(bytes)
    }

    /// A Firebase Cloud Messaging registration token: what the Android SDK's
    /// `FirebaseMessaging.getToken()` gives, URL-safe base64 characters and `:`, 20 to
    /// 4,096 of them (today's are about 160).
    public static func fcmToken(_ value: String, field: String) throws(HeraldError) -> String {
        let shaped =
            (20...4096).contains(value.utf8.count)
            && value.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
                case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"): true
                default: false
                }
            }
        guard shaped else { throw .invalidField(field, "must be an FCM registration token (20 to 4096 of A-Z a-z 0-9 - _ :)") }
        return value
    }

    /// A mobile number in E.164 (`+`, a country code, at most 15 digits in all), as the SMS
    /// fallback sends to it. JPush's numbers are taken too: `00` for `+`, and an 11-digit
    /// number starting with 1, a mainland China mobile number as JPush keeps them, gets
    /// ``defaultMobileCountryCode``.
    public static func mobile(_ value: String, field: String = "mobile") throws(HeraldError) -> String {
        func isDigits(_ text: Substring.UTF8View) -> Bool {
            text.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        let international: Substring
        if value.hasPrefix("+") {
            international = value.dropFirst()
        } else if value.hasPrefix("00") {
            international = value.dropFirst(2)
        } else if value.utf8.count == 11, value.hasPrefix("1"), isDigits(value[...].utf8) {
            international = Substring(defaultMobileCountryCode + value)
        } else {
            throw .invalidField(field, "must be an E.164 number (+, country code, number) or an 11-digit mainland China mobile number")
        }
        guard (8...15).contains(international.utf8.count), isDigits(international.utf8), !international.hasPrefix("0") else {
            throw .invalidField(field, "must be an E.164 number: + and 8 to 15 digits, the first not 0")
        }
        return "+" + international
    }

    /// The country code an 11-digit number without one gets (JPush's mainland China numbers).
    public static let defaultMobileCountryCode = "86"

    /// An app name: 1 to 100 bytes, no control characters.
    public static func appName(_ value: String) throws(HeraldError) -> String {
        let trimmed = value.trimmingWhitespace()
        if trimmed.isEmpty { throw .invalidField("name", "must not be empty") }
        if trimmed.utf8.count > Limits.maxAppNameBytes {
            throw .limit("name", "at most \(Limits.maxAppNameBytes) bytes")
        }
        if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .invalidField("name", "must not contain control characters")
        }
        return trimmed
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
