import Foundation
import Logging

/// What the user did with a notification, as the system tells the app (on iOS a
/// `UNNotificationResponse`): opened it, tapped one of its category's actions (with the
/// text typed into a text-input action), or dismissed it (a category with
/// `customDismissAction`).
public enum Response: Sendable, Hashable {
    case opened
    case action(identifier: String, text: String?)
    case dismissed

    /// `UNNotificationDefaultActionIdentifier`: a tap on the notification itself.
    public static let defaultActionIdentifier = "com.apple.UNNotificationDefaultActionIdentifier"
    /// `UNNotificationDismissActionIdentifier`: the user dismissed it.
    public static let dismissActionIdentifier = "com.apple.UNNotificationDismissActionIdentifier"

    /// The response a system action identifier means.
    public init(actionIdentifier: String, text: String? = nil) {
        switch actionIdentifier {
        case Self.defaultActionIdentifier: self = .opened
        case Self.dismissActionIdentifier: self = .dismissed
        default: self = .action(identifier: actionIdentifier, text: text)
        }
    }
}

/// Where a response leads: the route its category names (the action's `router`, or the
/// category's `default_router` for a tap), handed to the app to open.
public struct Opening: Sendable, Hashable {
    public var notification: HeraldEvent.Notification
    public var response: Response
    /// Nil when the category names none (or the notification has no category): the app
    /// opens what it opens by default, from the notification's extras.
    public var route: NotificationConfig.Route?
}

/// Turns the user's responses to Herald's notifications into routes for the app and
/// receipts for Herald (`opened`, `action` with its identifier, `dismissed`).
public struct Interactions: Sendable {
    /// The categories kept across launches, for a notification that names its category
    /// without carrying it.
    public let categories: CategoryStore?
    public let receipts: ReceiptQueue?
    let logger: Logger

    public init(categories: CategoryStore? = nil, receipts: ReceiptQueue?, logger: Logger) {
        self.categories = categories
        self.receipts = receipts
        self.logger = logger
    }

    /// The response to the notification whose `userInfo` the system gives back (an APNs
    /// notification's, or the one the SDK posted for a copy from the connection:
    /// ``HeraldEvent/Notification/userInfo``). Nil for a notification that isn't Herald's.
    public func respond(_ response: Response, userInfo: [AnyHashable: Any]) -> Opening? {
        for case .notification(let notification) in HeraldEvent.fromAPNs(userInfo: userInfo) {
            return respond(response, to: notification)
        }
        return nil
    }

    /// The route `response` leads to, its receipt queued.
    public func respond(_ response: Response, to notification: HeraldEvent.Notification) -> Opening {
        let config = notification.config ?? notification.category.flatMap { categories?.load()[$0] }
        let route: NotificationConfig.Route?
        let receipt: Receipt
        switch response {
        case .opened:
            route = config?.route(forAction: nil)
            receipt = Receipt(msgID: notification.messageID, kind: .opened)
        case .action(let identifier, _):
            route = config?.route(forAction: identifier)
            receipt = Receipt(msgID: notification.messageID, kind: .action, action: identifier)
        case .dismissed:
            route = nil
            receipt = Receipt(msgID: notification.messageID, kind: .dismissed)
        }
        do {
            try receipts?.add(receipt)
        } catch {
            logger.warning("cannot queue a receipt", metadata: ["herald.msg_id": "\(notification.messageID)", "error": "\(error)"])
        }
        return Opening(notification: notification, response: response, route: route)
    }
}
