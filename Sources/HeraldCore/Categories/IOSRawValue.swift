/// A value of a category's definition that iOS takes as a raw number: an option set
/// (`UNNotificationCategoryOptions`, `UNNotificationActionOptions`) or an enumeration
/// (`UIUserNotificationActionBehavior`, `UNNotificationContentExtensionResponseOption`).
/// The API takes it as the design documents give it, the raw value (`"options": 4`), or
/// by name as Herald first did (`"options": ["foreground"]`, `"behavior": "textInput"`);
/// devices always get the raw value, which the extension hands to iOS as it is
/// (../shared/reference/categories.md).
public enum IOSRawValue: Sendable, Hashable, Codable {
    case raw(Int)
    /// An option set's members by name.
    case names([String])
    /// An enumeration's case by name.
    case name(String)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let raw = try? container.decode(Int.self) {
            self = .raw(raw)
        } else if let names = try? container.decode([String].self) {
            self = .names(names)
        } else if let name = try? container.decode(String.self) {
            self = .name(name)
        } else {
            throw DecodingError.typeMismatch(
                Int.self,
                .init(codingPath: decoder.codingPath, debugDescription: "must be a number (the iOS raw value) or names")
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .raw(let raw): try container.encode(raw)
        case .names(let names): try container.encode(names)
        case .name(let name): try container.encode(name)
        }
    }

    /// The raw value of an option set whose members are `members` (name, bit), checked:
    /// a number with no other bit, or known names.
    public func optionSet(_ members: KeyValuePairs<String, Int>, field: String) throws(HeraldError) -> Int {
        let mask = members.reduce(0) { $0 | $1.value }
        let known = members.map(\.key).joined(separator: ", ")
        switch self {
        case .raw(let raw):
            guard raw >= 0, raw & ~mask == 0 else {
                throw .invalidField(field, "must be a sum of \(members.map { "\($0.value) (\($0.key))" }.joined(separator: ", ")), not \(raw)")
            }
            return raw
        case .names(let names):
            var raw = 0
            for (index, name) in names.enumerated() {
                guard let bit = members.first(where: { $0.key == name })?.value else {
                    throw .invalidField("\(field)[\(index)]", "must be one of \(known)")
                }
                raw |= bit
            }
            return raw
        case .name:
            throw .invalidField(field, "must be a number (the iOS raw value) or a list of \(known)")
        }
    }

    /// The raw value of an enumeration whose cases are `cases` (name, value), checked.
    public func enumeration(_ cases: KeyValuePairs<String, Int>, field: String) throws(HeraldError) -> Int {
        let allowed = cases.map { "\($0.value) (\($0.key))" }.joined(separator: ", ")
        switch self {
        case .raw(let raw):
            guard cases.contains(where: { $0.value == raw }) else { throw .invalidField(field, "must be \(allowed), not \(raw)") }
            return raw
        case .name(let name):
            guard let raw = cases.first(where: { $0.key == name })?.value else { throw .invalidField(field, "must be \(allowed)") }
            return raw
        case .names:
            throw .invalidField(field, "must be \(allowed)")
        }
    }
}
