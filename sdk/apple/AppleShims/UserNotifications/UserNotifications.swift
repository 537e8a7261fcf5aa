// A shim of the UserNotifications symbols HeraldKitApple uses, so scripts/check-apple-glue.sh
// can type-check the glue on Linux. Declarations only, with Apple's names and signatures
// (../SYMBOLS.md); no body ever runs. Apple's types are treated as not Sendable, the
// stricter assumption.
import Foundation

open class UNUserNotificationCenter: NSObject {
    open class func current() -> UNUserNotificationCenter { fatalError() }
    open func add(_ request: UNNotificationRequest) async throws { fatalError() }
    open func removePendingNotificationRequests(withIdentifiers identifiers: [String]) { fatalError() }
    open func removeDeliveredNotifications(withIdentifiers identifiers: [String]) { fatalError() }
    open func setNotificationCategories(_ categories: Set<UNNotificationCategory>) { fatalError() }
    open func notificationCategories() async -> Set<UNNotificationCategory> { fatalError() }
    @available(iOS 16.0, macOS 13.0, tvOS 16.0, *)
    @available(watchOS, unavailable)
    open func setBadgeCount(_ newBadgeCount: Int) async throws { fatalError() }
    open func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool { fatalError() }
}

/// Apple's requirements are `optional` (Objective-C); here they are required, so a glue
/// method whose signature drifts from Apple's fails the check instead of never being called.
public protocol UNUserNotificationCenterDelegate: NSObjectProtocol {
    func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void
    )
    func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping @Sendable () -> Void
    )
}

open class UNNotificationContent: NSObject {
    open var userInfo: [AnyHashable: Any] { fatalError() }
}

open class UNMutableNotificationContent: UNNotificationContent {
    open var title: String {
        get { fatalError() }
        set { fatalError() }
    }
    open var subtitle: String {
        get { fatalError() }
        set { fatalError() }
    }
    open var body: String {
        get { fatalError() }
        set { fatalError() }
    }
    open var badge: NSNumber? {
        get { fatalError() }
        set { fatalError() }
    }
    open var sound: UNNotificationSound? {
        get { fatalError() }
        set { fatalError() }
    }
    open var categoryIdentifier: String {
        get { fatalError() }
        set { fatalError() }
    }
    open override var userInfo: [AnyHashable: Any] {
        get { fatalError() }
        set { fatalError() }
    }
    open var attachments: [UNNotificationAttachment] {
        get { fatalError() }
        set { fatalError() }
    }
}

open class UNNotificationSound: NSObject {
    open class var `default`: UNNotificationSound { fatalError() }
    public convenience init(named name: UNNotificationSoundName) { fatalError() }
}

public struct UNNotificationSoundName: RawRepresentable, Hashable, Sendable {
    public var rawValue: String { fatalError() }
    public init(_ rawValue: String) { fatalError() }
    public init(rawValue: String) { fatalError() }
}

open class UNNotificationAttachment: NSObject {
    public convenience init(identifier: String, url URL: URL, options: [AnyHashable: Any]? = nil) throws { fatalError() }
}

open class UNNotificationRequest: NSObject {
    public convenience init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) { fatalError() }
    open var content: UNNotificationContent { fatalError() }
    open var trigger: UNNotificationTrigger? { fatalError() }
}

open class UNNotificationTrigger: NSObject {}

open class UNPushNotificationTrigger: UNNotificationTrigger {}

open class UNNotification: NSObject {
    open var request: UNNotificationRequest { fatalError() }
}

open class UNNotificationResponse: NSObject {
    open var notification: UNNotification { fatalError() }
    open var actionIdentifier: String { fatalError() }
}

open class UNTextInputNotificationResponse: UNNotificationResponse {
    open var userText: String { fatalError() }
}

open class UNNotificationCategory: NSObject {
    public convenience init(
        identifier: String,
        actions: [UNNotificationAction],
        intentIdentifiers: [String],
        options: UNNotificationCategoryOptions = []
    ) { fatalError() }
    open var identifier: String { fatalError() }
}

open class UNNotificationAction: NSObject {
    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = []) { fatalError() }
}

open class UNTextInputNotificationAction: UNNotificationAction {
    public convenience init(
        identifier: String,
        title: String,
        options: UNNotificationActionOptions = [],
        textInputButtonTitle: String,
        textInputPlaceholder: String
    ) { fatalError() }
}

public struct UNNotificationCategoryOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { fatalError() }
}

public struct UNNotificationActionOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { fatalError() }
}

public struct UNNotificationPresentationOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { fatalError() }
    public static var badge: UNNotificationPresentationOptions { fatalError() }
    public static var sound: UNNotificationPresentationOptions { fatalError() }
    public static var list: UNNotificationPresentationOptions { fatalError() }
    public static var banner: UNNotificationPresentationOptions { fatalError() }
}

public struct UNAuthorizationOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { fatalError() }
    public static var badge: UNAuthorizationOptions { fatalError() }
    public static var sound: UNAuthorizationOptions { fatalError() }
    public static var alert: UNAuthorizationOptions { fatalError() }
}
