/// Chooses a push's content per device language: `notification.ios.localizations` holds
/// alerts by BCP 47 tag, and a device gets the one of the language it reported at
/// registration, found by dropping subtags from the end (`zh-Hans-CN`, then `zh-Hans`,
/// then `zh`), else the push's own alert.
///
/// Only pushes with localizations are rendered per device; every other push is rendered
/// once for all, as before.
public enum PushLocalization {
    /// Languages a push may carry content for.
    public static let maxLanguages = 50

    /// The key of `localizations` for `language`, if any (tags compared without regard to
    /// case).
    public static func match(_ language: String?, in available: some Collection<String>) -> String? {
        guard var tag = language?.lowercased(), !available.isEmpty else { return nil }
        let keys = Dictionary(available.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        while !tag.isEmpty {
            if let key = keys[tag] { return key }
            guard let dash = tag.lastIndex(of: "-") else { break }
            tag = String(tag[..<dash])
        }
        return nil
    }
}

extension Push {
    /// Whether the push has content per language (and so is rendered per device).
    public var isLocalized: Bool { notification?.ios?.localizations?.isEmpty == false }

    /// The push as a device of `language` gets it: the alert of its language (or the
    /// push's own), without the other languages.
    public func localized(for language: String?) -> Push {
        guard let localizations = notification?.ios?.localizations else { return self }
        var push = self
        if let key = PushLocalization.match(language, in: localizations.keys) {
            push.notification?.ios?.alert = localizations[key]
        }
        push.notification?.ios?.localizations = nil
        return push
    }

    /// Every rendering devices may get: the push's own and one per language.
    var localizedVariants: [Push] {
        guard let localizations = notification?.ios?.localizations else { return [self] }
        return [localized(for: nil)] + localizations.keys.sorted().map { localized(for: $0) }
    }
}

extension PushRequest {
    /// The languages' tags and their alerts.
    static func validateLocalizations(_ ios: IOSNotification) throws(HeraldError) {
        guard let localizations = ios.localizations else { return }
        if localizations.isEmpty || localizations.count > PushLocalization.maxLanguages {
            throw .invalidField("notification.ios.localizations", "must have 1 to \(PushLocalization.maxLanguages) languages")
        }
        for (tag, alert) in localizations {
            let field = "notification.ios.localizations.\(tag)"
            let normalized = try Validation.language(tag, field: field)
            if normalized != tag { throw .invalidField(field, "write the tag with - (\(normalized))") }
            let texts: [String?] =
                switch alert {
                case .text(let text): [text]
                case .parts(let parts): [parts.title, parts.subtitle, parts.body]
                }
            for text in texts {
                if let text, text.utf8.count > PushLimits.maxAlertBytes { throw .tooLarge(field, "at most \(PushLimits.maxAlertBytes) bytes") }
            }
        }
    }
}

extension IOSNotification.Alert {
    /// The alert as a request writes it.
    var json: JSONValue {
        switch self {
        case .text(let text): return .string(text)
        case .parts(let parts):
            var fields: [String: JSONValue] = [:]
            fields["title"] = parts.title.map(JSONValue.string)
            fields["subtitle"] = parts.subtitle.map(JSONValue.string)
            fields["body"] = parts.body.map(JSONValue.string)
            for (key, value) in parts.localization {
                switch value {
                case .text(let text): fields[key] = .string(text)
                case .list(let values): fields[key] = .array(values.map(JSONValue.string))
                }
            }
            return .object(fields)
        }
    }
}
