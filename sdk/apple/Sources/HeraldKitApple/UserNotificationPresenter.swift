#if canImport(UserNotifications) && !os(tvOS) && !os(watchOS)
import Foundation
import HeraldKit
import Logging
import UserNotifications

#if canImport(UIKit)
import UIKit
#endif

/// HeraldKit's ``Presenter`` over `UNUserNotificationCenter`: it does what ``Arrivals``
/// decided, and nothing else.
///
/// - show: posts the notification under its identifier (a replace re-posts in place), its
///   `userInfo` the APNs form, so a tap resolves as a tap on the APNs copy does
///   (``Interactions``); with its media attached when the download succeeds;
/// - remove: pending and delivered;
/// - register: beside the categories already registered;
/// - deliver: hands an in-app message to the app;
/// - setBadge: `setBadgeCount` from iOS 16, before it the application's badge number.
public struct UserNotificationPresenter: Presenter {
    let deliverMessage: @Sendable (HeraldEvent.Message) async -> Void
    /// Sets the badge before iOS 16; nil in an extension, which has no application.
    let legacyBadge: (@MainActor @Sendable (Int) -> Void)?
    let logger: Logger

    /// - Parameter deliver: receives the in-app messages.
    public init(logger: Logger, deliver: @escaping @Sendable (HeraldEvent.Message) async -> Void) {
        self.init(logger: logger, legacyBadge: nil, deliver: deliver)
    }

    init(logger: Logger, legacyBadge: (@MainActor @Sendable (Int) -> Void)?, deliver: @escaping @Sendable (HeraldEvent.Message) async -> Void) {
        self.deliverMessage = deliver
        self.legacyBadge = legacyBadge
        self.logger = logger
    }

    #if canImport(UIKit)
    /// - Parameter application: sets the badge before iOS 16 (`UIApplication.shared`; the
    ///   glue never reaches for it itself, so it links into app extensions).
    public init(application: UIApplication, logger: Logger, deliver: @escaping @Sendable (HeraldEvent.Message) async -> Void) {
        self.init(logger: logger, legacyBadge: { application.applicationIconBadgeNumber = $0 }, deliver: deliver)
    }
    #endif

    public func show(_ notification: HeraldEvent.Notification, replacing: Bool) async {
        let content = UNMutableNotificationContent()
        content.title = notification.title ?? ""
        content.subtitle = notification.subtitle ?? ""
        content.body = notification.alert ?? ""
        content.badge = notification.badge.map { NSNumber(value: $0) }
        content.sound = notification.sound.map(Self.sound)
        content.categoryIdentifier = notification.category ?? ""
        content.userInfo = notification.userInfo
        if let media = notification.mediaURL.flatMap(URL.init(string:)),
            let attachment = await MediaAttachment.make(from: media, logger: logger)
        {
            content.attachments = [attachment]
        }
        let request = UNNotificationRequest(identifier: notification.identifier, content: content, trigger: nil)
        do {
            try await UNUserNotificationCenter.current().add(request)
        } catch {
            logger.warning(
                "cannot post a notification",
                metadata: ["herald.msg_id": "\(notification.messageID)", "error": "\(error)"]
            )
        }
    }

    public func remove(identifiers: [String]) async {
        let center = UNUserNotificationCenter.current()
        center.removePendingNotificationRequests(withIdentifiers: identifiers)
        center.removeDeliveredNotifications(withIdentifiers: identifiers)
    }

    public func register(_ categories: [NotificationConfig]) async {
        await NotificationCategories.register(categories)
    }

    public func deliver(_ message: HeraldEvent.Message) async {
        await deliverMessage(message)
    }

    public func setBadge(_ count: Int) async {
        if #available(iOS 16.0, macOS 13.0, *) {
            do {
                try await UNUserNotificationCenter.current().setBadgeCount(count)
            } catch {
                logger.warning("cannot set the badge", metadata: ["error": "\(error)"])
            }
        } else if let legacyBadge {
            await legacyBadge(count)
        }
    }

    /// A sound by name; `default` is the system's.
    static func sound(_ name: String) -> UNNotificationSound {
        name == "default" ? .default : UNNotificationSound(named: UNNotificationSoundName(rawValue: name))
    }
}
#endif
