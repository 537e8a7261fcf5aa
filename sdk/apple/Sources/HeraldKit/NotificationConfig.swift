import Foundation

/// A notification category defined on the server, as a push carries it
/// (`notification_config`) or as it is sent ahead (a `category_config` message): its
/// action buttons and the route each opens. The app registers it (a
/// `UNNotificationCategory` on Apple platforms) before it shows a notification of it, and
/// reports the version it holds (``HeraldClient/Report/categoryVersion(category:version:)``).
public struct NotificationConfig: Sendable, Hashable, Codable {
    /// Where an action, or a tap on the notification, leads in the app.
    public struct Route: Sendable, Hashable, Codable {
        public var routerURL: String?
        public var toController: String?
        public var externalURL: String?
        /// The parameters; a value that isn't a string is given as its JSON text.
        public var parameters: [String: String]?

        enum CodingKeys: String, CodingKey {
            case routerURL = "router_url"
            case toController = "to_controller"
            case externalURL = "external_url"
            case parameters
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            routerURL = try container.decodeIfPresent(String.self, forKey: .routerURL)
            toController = try container.decodeIfPresent(String.self, forKey: .toController)
            externalURL = try container.decodeIfPresent(String.self, forKey: .externalURL)
            parameters = try container.decodeIfPresent(Extras.self, forKey: .parameters)?.values
        }
    }

    public struct Action: Sendable, Hashable, Codable {
        public var identifier: String
        public var title: String
        /// `UNNotificationActionOptions`' raw value: authenticationRequired 1, destructive
        /// 2, foreground 4.
        public var options: UInt
        /// `UIUserNotificationActionBehavior`'s raw value: default 0, textInput 1.
        public var behavior: Int
        public var textInputButtonTitle: String?
        public var textInputPlaceholder: String?
        /// `UNNotificationContentExtensionResponseOption`'s raw value: doNotDismiss 0,
        /// dismiss 1, dismissAndForwardAction 2; nil when not given.
        public var extensionOption: Int?
        public var router: Route?

        enum CodingKeys: String, CodingKey {
            case identifier, title, options, behavior, router
            case textInputButtonTitle = "text_input_button_title"
            case textInputPlaceholder = "text_input_placeholder"
            case extensionOption = "extension_option"
        }

        /// Whether the action asks for text.
        public var isTextInput: Bool { behavior == 1 }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            identifier = try container.decode(String.self, forKey: .identifier)
            title = try container.decode(String.self, forKey: .title)
            options = try RawValue.optionSet(container, .options, names: ["authenticationRequired": 1, "destructive": 2, "foreground": 4])
            behavior = Int(try RawValue.enumeration(container, .behavior, names: ["default": 0, "textInput": 1]) ?? 0)
            textInputButtonTitle = try container.decodeIfPresent(String.self, forKey: .textInputButtonTitle)
            textInputPlaceholder = try container.decodeIfPresent(String.self, forKey: .textInputPlaceholder)
            extensionOption = try RawValue.enumeration(
                container,
                .extensionOption,
                names: ["doNotDismiss": 0, "dismiss": 1, "dismissAndForwardAction": 2, "handle": 0, "open": 2]
            ).map { Int($0) }
            router = try container.decodeIfPresent(Route.self, forKey: .router)
        }
    }

    public var identifier: String
    /// Grows by one with every change on the server; 0 when the payload gives none (the
    /// design documents' shape).
    public var version: Int64
    public var intentIdentifiers: [String]?
    /// `UNNotificationCategoryOptions`' raw value: customDismissAction 1, allowInCarPlay 2,
    /// hiddenPreviewsShowTitle 4, hiddenPreviewsShowSubtitle 8, allowAnnouncement 16.
    public var options: UInt
    public var defaultRouter: Route?
    public var actions: [Action]

    enum CodingKeys: String, CodingKey {
        case identifier, version, options, actions
        case intentIdentifiers = "intent_identifiers"
        case defaultRouter = "default_router"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        version = try container.decodeIfPresent(Int64.self, forKey: .version) ?? 0
        intentIdentifiers = try container.decodeIfPresent([String].self, forKey: .intentIdentifiers)
        options = try RawValue.optionSet(
            container,
            .options,
            names: [
                "customDismissAction": 1, "allowInCarPlay": 2, "hiddenPreviewsShowTitle": 4, "hiddenPreviewsShowSubtitle": 8,
                "allowAnnouncement": 16,
            ]
        )
        defaultRouter = try container.decodeIfPresent(Route.self, forKey: .defaultRouter)
        actions = try container.decodeIfPresent([Action].self, forKey: .actions) ?? []
    }

    /// The configuration under `key`, or why it was left out: a broken category doesn't
    /// take the notification carrying it down with it. Given as one object or, as the
    /// design documents give it, an array (the first is taken).
    static func lenient<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) -> (NotificationConfig?, String?) {
        guard container.contains(key), (try? container.decodeNil(forKey: key)) != true else { return (nil, nil) }
        do {
            return (try container.decode(NotificationConfig.self, forKey: key), nil)
        } catch {
            if let list = try? container.decode([NotificationConfig].self, forKey: key), let first = list.first { return (first, nil) }
            return (nil, ParsedPayload.describe(error))
        }
    }

    /// The prefix of the categories kept across launches (``CategoryStore``).
    public static let persistentPrefix = "push_extension"

    /// Whether the app keeps the category across launches; others last one launch.
    public var isPersistent: Bool { identifier.hasPrefix(Self.persistentPrefix) }

    /// The route of an action (by its identifier), or the default route for a tap on the
    /// notification (`UNNotificationDefaultActionIdentifier`, or nil).
    public func route(forAction identifier: String?) -> Route? {
        guard let identifier, let action = actions.first(where: { $0.identifier == identifier }) else { return defaultRouter }
        return action.router ?? defaultRouter
    }

    /// The configuration in an APNs notification's `userInfo` (its `notification_config`
    /// key), as a Notification Service Extension reads it; nil when there is none. The
    /// design documents give an array of categories; the first is taken.
    public init?(userInfo: [AnyHashable: Any]) {
        guard let first = Self.all(userInfo: userInfo).first else { return nil }
        self = first
    }

    /// Every category in an APNs notification's `userInfo` (`notification_config`: one
    /// category, or an array of them as the design documents give it). A category that
    /// doesn't parse is left out.
    public static func all(userInfo: [AnyHashable: Any]) -> [NotificationConfig] {
        guard let object = userInfo["notification_config"] else { return [] }
        let objects = (object as? [Any]) ?? [object]
        return objects.compactMap { object in
            guard JSONSerialization.isValidJSONObject(object), let data = try? JSONSerialization.data(withJSONObject: object) else {
                return nil
            }
            return try? JSONDecoder().decode(NotificationConfig.self, from: data)
        }
    }

    /// The media URL in an APNs notification's `userInfo` (`herald.media_url`), for the
    /// service extension to download and attach.
    public static func mediaURL(userInfo: [AnyHashable: Any]) -> URL? {
        ((userInfo["herald"] as? [String: Any])?["media_url"] as? String).flatMap(URL.init(string:))
    }
}

/// The categories the app keeps across launches (``NotificationConfig/isPersistent``), in a
/// JSON file in a directory the app chooses: an app group's container, so the app and its
/// Notification Service Extension share them.
public struct CategoryStore: Sendable {
    public let file: URL

    /// - Parameter directory: where the file (`herald-categories.json`) is kept.
    public init(directory: URL) {
        file = directory.appendingPathComponent("herald-categories.json")
    }

    /// The kept categories, by identifier.
    public func load() -> [String: NotificationConfig] {
        guard let data = try? Data(contentsOf: file),
            let configs = try? JSONDecoder().decode([String: NotificationConfig].self, from: data)
        else { return [:] }
        return configs
    }

    /// Keeps `config` when it is persistent and newer than the one kept; true when it did.
    @discardableResult
    public func save(_ config: NotificationConfig) throws -> Bool {
        guard config.isPersistent else { return false }
        var configs = load()
        if let kept = configs[config.identifier], kept.version >= config.version { return false }
        configs[config.identifier] = config
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(configs).write(to: file, options: .atomic)
        return true
    }

    /// The version of a kept category, if any.
    public func version(of identifier: String) -> Int64? { load()[identifier]?.version }
}

/// One language's alert in a push's `localizations`: a string, or title / subtitle / body.
struct LocalizedAlert: Decodable {
    var title: String?
    var subtitle: String?
    var body: String?

    init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            body = text
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        subtitle = try container.decodeIfPresent(String.self, forKey: .subtitle)
        body = try container.decodeIfPresent(String.self, forKey: .body)
    }

    enum CodingKeys: String, CodingKey { case title, subtitle, body }

    /// The key for `language`, as the server chooses: subtags dropped from the end
    /// (`zh-Hans-CN`, `zh-Hans`, `zh`), case ignored.
    static func match(_ language: String?, in keys: [String]) -> String? {
        guard var tag = language?.lowercased().replacingOccurrences(of: "_", with: "-") else { return nil }
        while !tag.isEmpty {
            if let key = keys.first(where: { $0.lowercased() == tag }) { return key }
            guard let dash = tag.lastIndex(of: "-") else { break }
            tag = String(tag[..<dash])
        }
        return nil
    }
}

/// The raw values iOS takes for a category's options and an action's options, behavior
/// and extension option: given as numbers (the design documents, and Herald now), or by
/// name (what Herald sent before).
enum RawValue {
    static func optionSet<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key, names: [String: UInt]) throws -> UInt {
        if let raw = try? container.decodeIfPresent(UInt.self, forKey: key) { return raw }
        guard let given = try container.decodeIfPresent([String].self, forKey: key) else { return 0 }
        return given.reduce(0) { $0 | (names[$1] ?? 0) }
    }

    static func enumeration<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key, names: [String: UInt]) throws -> UInt? {
        if let raw = try? container.decodeIfPresent(UInt.self, forKey: key) { return raw }
        guard let given = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let raw = names[given] else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "unknown value \(given)")
        }
        return raw
    }
}
