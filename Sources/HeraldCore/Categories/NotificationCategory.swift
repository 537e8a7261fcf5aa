import Foundation

/// A notification category an operator defines on the server (`/v3/categories`): the
/// action buttons iOS shows with a notification, and the route each action (and a tap on
/// the notification itself) opens in the app. A push naming it in
/// `notification.ios.category` carries it as `notification_config`, which the app's
/// Notification Service Extension registers before the notification is shown.
///
/// Categories whose identifier starts with ``persistentPrefix`` are kept by the app across
/// launches; the others last one launch.
public struct NotificationCategory: Sendable, Hashable, Codable {
    public var identifier: String
    public var intentIdentifiers: [String]?
    /// `UNNotificationCategoryOptions`: the raw value, or names (``optionNames``).
    public var options: IOSRawValue?
    /// The route a tap on the notification opens.
    public var defaultRouter: CategoryRouter?
    public var actions: [CategoryAction]

    public init(
        identifier: String,
        intentIdentifiers: [String]? = nil,
        options: IOSRawValue? = nil,
        defaultRouter: CategoryRouter? = nil,
        actions: [CategoryAction] = []
    ) {
        self.identifier = identifier
        self.intentIdentifiers = intentIdentifiers
        self.options = options
        self.defaultRouter = defaultRouter
        self.actions = actions
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case identifier
        case intentIdentifiers = "intent_identifiers"
        case options
        case defaultRouter = "default_router"
        case actions
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        intentIdentifiers = try container.decodeIfGiven([String].self, forKey: .intentIdentifiers)
        options = try container.decodeIfGiven(IOSRawValue.self, forKey: .options)
        defaultRouter = try container.decodeIfGiven(CategoryRouter.self, forKey: .defaultRouter)
        actions = try container.decodeIfGiven([CategoryAction].self, forKey: .actions) ?? []
    }

    /// The prefix of the categories the app keeps across launches.
    public static let persistentPrefix = "push_extension"
    /// Bytes in a category's or an action's identifier.
    public static let maxIdentifierBytes = 64
    /// Actions a category may have: as many as iOS shows.
    public static let maxActions = 4
    /// Bytes in a title, a placeholder, a controller name or an intent identifier.
    public static let maxTextBytes = 256
    /// Bytes in a router URL.
    public static let maxURLBytes = 1024
    /// Categories an app may define.
    public static let maxPerApp = 100
    /// `UNNotificationCategoryOptions`: each member's name and bit.
    public static let optionNames: KeyValuePairs<String, Int> = [
        "customDismissAction": 1, "allowInCarPlay": 2, "hiddenPreviewsShowTitle": 4, "hiddenPreviewsShowSubtitle": 8,
        "allowAnnouncement": 16,
    ]

    /// Checks every value and limit; the error names the field.
    public func validate() throws(HeraldError) {
        try Self.checkIdentifier(identifier, field: "identifier")
        for (index, intent) in (intentIdentifiers ?? []).enumerated() {
            try Self.checkText(intent, field: "intent_identifiers[\(index)]")
        }
        _ = try options?.optionSet(Self.optionNames, field: "options")
        try defaultRouter?.validate(field: "default_router")
        if actions.count > Self.maxActions {
            throw .invalidField("actions", "at most \(Self.maxActions) actions (iOS shows no more), not \(actions.count)")
        }
        var seen = Set<String>()
        for (index, action) in actions.enumerated() {
            try action.validate(field: "actions[\(index)]")
            if !seen.insert(action.identifier).inserted {
                throw .invalidField("actions[\(index)].identifier", "\(action.identifier) is already the identifier of another action")
            }
        }
    }

    static func checkIdentifier(_ identifier: String, field: String) throws(HeraldError) {
        if identifier.isEmpty || identifier.utf8.count > maxIdentifierBytes {
            throw .invalidField(field, "must be 1 to \(maxIdentifierBytes) bytes, not \(identifier.utf8.count)")
        }
        if identifier.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "/" }) {
            throw .invalidField(field, "must not contain control characters or /")
        }
    }

    static func checkText(_ text: String, field: String) throws(HeraldError) {
        if text.isEmpty || text.utf8.count > maxTextBytes {
            throw .invalidField(field, "must be 1 to \(maxTextBytes) bytes, not \(text.utf8.count)")
        }
    }

    /// Whether the app keeps the category across launches.
    public var isPersistent: Bool { identifier.hasPrefix(Self.persistentPrefix) }

    /// The category as devices get it (`notification_config`): its fields as defined, and
    /// the version a push or a delivery carries.
    public func config(version: Int64) -> JSONValue {
        var fields: [String: JSONValue] = ["identifier": .string(identifier), "version": .int(version)]
        fields["intent_identifiers"] = intentIdentifiers.map { .array($0.map(JSONValue.string)) }
        fields["options"] = (try? options?.optionSet(Self.optionNames, field: "options")).map { JSONValue.int(Int64($0)) }
        fields["default_router"] = defaultRouter?.json
        fields["actions"] = .array(actions.map(\.json))
        return .object(fields)
    }
}

/// Where an action (or a tap on the notification) leads in the app: a URL the app's router
/// opens, a view controller by name, or a web page.
public struct CategoryRouter: Sendable, Hashable, Codable {
    public var routerURL: String?
    public var toController: String?
    /// An http or https page.
    public var externalURL: String?
    public var parameters: [String: JSONValue]?

    public init(routerURL: String? = nil, toController: String? = nil, externalURL: String? = nil, parameters: [String: JSONValue]? = nil) {
        self.routerURL = routerURL
        self.toController = toController
        self.externalURL = externalURL
        self.parameters = parameters
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case routerURL = "router_url"
        case toController = "to_controller"
        case externalURL = "external_url"
        case parameters
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        routerURL = try container.decodeIfGiven(String.self, forKey: .routerURL)
        toController = try container.decodeIfGiven(String.self, forKey: .toController)
        externalURL = try container.decodeIfGiven(String.self, forKey: .externalURL)
        parameters = try container.decodeIfGiven([String: JSONValue].self, forKey: .parameters)
    }

    func validate(field: String) throws(HeraldError) {
        if let routerURL { try Self.checkURL(routerURL, field: "\(field).router_url", webOnly: false) }
        if let externalURL { try Self.checkURL(externalURL, field: "\(field).external_url", webOnly: true) }
        if let toController { try NotificationCategory.checkText(toController, field: "\(field).to_controller") }
        if routerURL == nil, toController == nil, externalURL == nil {
            throw .missingField(field, "needs router_url, to_controller or external_url")
        }
    }

    /// A URL with a scheme (`myapp://orders/42`); for `webOnly`, an http or https URL
    /// with a host.
    static func checkURL(_ text: String, field: String, webOnly: Bool) throws(HeraldError) {
        if text.utf8.count > NotificationCategory.maxURLBytes {
            throw .invalidField(field, "at most \(NotificationCategory.maxURLBytes) bytes")
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), !scheme.isEmpty, text.contains(":") else {
            throw .invalidField(field, "must be a URL with a scheme (myapp://path or https://host/path)")
        }
        if webOnly || scheme == "http" || scheme == "https" {
            guard scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
                throw .invalidField(field, "must be an http or https URL with a host")
            }
        }
    }

    var json: JSONValue {
        var fields: [String: JSONValue] = [:]
        fields["router_url"] = routerURL.map(JSONValue.string)
        fields["to_controller"] = toController.map(JSONValue.string)
        fields["external_url"] = externalURL.map(JSONValue.string)
        fields["parameters"] = parameters.map(JSONValue.object)
        return .object(fields)
    }
}

/// One action button of a category.
public struct CategoryAction: Sendable, Hashable, Codable {
    public var identifier: String
    public var title: String
    /// `UNNotificationActionOptions`: the raw value, or names (``optionNames``).
    public var options: IOSRawValue?
    /// `UIUserNotificationActionBehavior`: 0 (`default`), or 1 (`textInput`) for an action
    /// that asks for text.
    public var behavior: IOSRawValue?
    public var textInputButtonTitle: String?
    public var textInputPlaceholder: String?
    /// `UNNotificationContentExtensionResponseOption`, what a Notification Content
    /// Extension does with the action: 0 (`doNotDismiss`, or `handle`: it handles it and
    /// stays), 1 (`dismiss`), 2 (`dismissAndForwardAction`, or `open`: the app gets it).
    public var extensionOption: IOSRawValue?
    public var router: CategoryRouter?

    public init(identifier: String, title: String, options: IOSRawValue? = nil, behavior: IOSRawValue? = nil, router: CategoryRouter? = nil) {
        self.identifier = identifier
        self.title = title
        self.options = options
        self.behavior = behavior
        self.router = router
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case identifier, title, options, behavior
        case textInputButtonTitle = "text_input_button_title"
        case textInputPlaceholder = "text_input_placeholder"
        case extensionOption = "extension_option"
        case router
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        title = try container.decode(String.self, forKey: .title)
        options = try container.decodeIfGiven(IOSRawValue.self, forKey: .options)
        behavior = try container.decodeIfGiven(IOSRawValue.self, forKey: .behavior)
        textInputButtonTitle = try container.decodeIfGiven(String.self, forKey: .textInputButtonTitle)
        textInputPlaceholder = try container.decodeIfGiven(String.self, forKey: .textInputPlaceholder)
        extensionOption = try container.decodeIfGiven(IOSRawValue.self, forKey: .extensionOption)
        router = try container.decodeIfGiven(CategoryRouter.self, forKey: .router)
    }

    /// `UNNotificationActionOptions`: each member's name and bit.
    public static let optionNames: KeyValuePairs<String, Int> = ["authenticationRequired": 1, "destructive": 2, "foreground": 4]
    /// `UIUserNotificationActionBehavior`: each case's name and raw value.
    public static let behaviors: KeyValuePairs<String, Int> = ["default": 0, "textInput": 1]
    /// `UNNotificationContentExtensionResponseOption`: each case's name and raw value, and
    /// Herald's first names (`handle`, `open`).
    public static let extensionOptions: KeyValuePairs<String, Int> = [
        "doNotDismiss": 0, "dismiss": 1, "dismissAndForwardAction": 2, "handle": 0, "open": 2,
    ]

    /// The raw values, once validated.
    var rawOptions: Int? { try? options?.optionSet(Self.optionNames, field: "options") }
    var rawBehavior: Int? { try? behavior?.enumeration(Self.behaviors, field: "behavior") }
    var rawExtensionOption: Int? { try? extensionOption?.enumeration(Self.extensionOptions, field: "extension_option") }

    func validate(field: String) throws(HeraldError) {
        try NotificationCategory.checkIdentifier(identifier, field: "\(field).identifier")
        try NotificationCategory.checkText(title, field: "\(field).title")
        _ = try options?.optionSet(Self.optionNames, field: "\(field).options")
        let behavior = try behavior?.enumeration(Self.behaviors, field: "\(field).behavior")
        _ = try extensionOption?.enumeration(Self.extensionOptions, field: "\(field).extension_option")
        if let textInputButtonTitle { try NotificationCategory.checkText(textInputButtonTitle, field: "\(field).text_input_button_title") }
        if let textInputPlaceholder { try NotificationCategory.checkText(textInputPlaceholder, field: "\(field).text_input_placeholder") }
        if behavior != 1, textInputButtonTitle != nil || textInputPlaceholder != nil {
            throw .invalidField("\(field).behavior", "must be textInput for an action with text_input_button_title or text_input_placeholder")
        }
        try router?.validate(field: "\(field).router")
    }

    var json: JSONValue {
        var fields: [String: JSONValue] = ["identifier": .string(identifier), "title": .string(title)]
        fields["options"] = rawOptions.map { JSONValue.int(Int64($0)) }
        fields["behavior"] = rawBehavior.map { JSONValue.int(Int64($0)) }
        fields["text_input_button_title"] = textInputButtonTitle.map(JSONValue.string)
        fields["text_input_placeholder"] = textInputPlaceholder.map(JSONValue.string)
        fields["extension_option"] = rawExtensionOption.map { JSONValue.int(Int64($0)) }
        fields["router"] = router?.json
        return .object(fields)
    }
}
