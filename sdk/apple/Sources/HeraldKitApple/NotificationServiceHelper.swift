#if canImport(UserNotifications) && !os(tvOS) && !os(watchOS)
import Foundation
import HeraldKit
import Logging
import NIOConcurrencyHelpers
import UserNotifications

/// Everything a Notification Service Extension does for Herald's notifications, in one
/// call: it records the arrival in the App Group's ledger (so the app doesn't show the
/// message again from the connection) and queues a `delivered` receipt, registers the
/// push's categories (keeping the `push_extension…` ones), attaches the media, then
/// delivers the content. When time runs out it delivers the content as it stands; never
/// nothing. A notification that isn't Herald's is delivered as it came.
///
/// ```swift
/// final class NotificationService: UNNotificationServiceExtension {
///     let herald = NotificationServiceHelper(appGroup: HeraldAppGroup(directory: groupURL), logger: logger)
///     override func didReceive(_ request: UNNotificationRequest,
///                              withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
///         herald.didReceive(request, withContentHandler: contentHandler)
///     }
///     override func serviceExtensionTimeWillExpire() { herald.serviceExtensionTimeWillExpire() }
/// }
/// ```
public final class NotificationServiceHelper: @unchecked Sendable {
    /// The content handler (taken once) and the content as it stands; only under the box's lock.
    private struct Pending {
        var handler: ((UNNotificationContent) -> Void)?
        var content: UNNotificationContent?
    }

    public let appGroup: HeraldAppGroup
    let logger: Logger
    private let pending = NIOLockedValueBox(Pending())

    public init(appGroup: HeraldAppGroup, logger: Logger) {
        self.appGroup = appGroup
        self.logger = logger
    }

    public func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        let content = request.content.mutableCopy() as? UNMutableNotificationContent
        pending.withLockedValue { $0 = Pending(handler: contentHandler, content: content ?? request.content) }
        let userInfo = request.content.userInfo
        let events = HeraldEvent.fromAPNs(userInfo: userInfo) { [logger] reason in
            logger.warning("a notification HeraldKit can't read", metadata: ["reason": "\(reason)"])
        }
        guard let notification = events.lazy.compactMap(\.shownNotification).first else {
            finish()
            return
        }
        recordArrival(of: notification.messageID)
        let configs = NotificationConfig.all(userInfo: userInfo)
        let media = NotificationConfig.mediaURL(userInfo: userInfo)
        Task {
            await self.register(configs)
            if let media, let attachment = await MediaAttachment.make(from: media, logger: self.logger) {
                self.attach(attachment)
            }
            self.finish()
        }
    }

    /// From the extension's `serviceExtensionTimeWillExpire()`.
    public func serviceExtensionTimeWillExpire() {
        finish()
    }

    private func recordArrival(of msgID: String) {
        do {
            _ = try appGroup.ledger.arrived(msgID, via: .apns)
            try appGroup.receipts.add(Receipt(msgID: msgID, kind: .delivered))
        } catch {
            logger.warning("cannot record the arrival", metadata: ["herald.msg_id": "\(msgID)", "error": "\(error)"])
        }
    }

    private func register(_ configs: [NotificationConfig]) async {
        for config in configs {
            do {
                try appGroup.categories.save(config)
            } catch {
                logger.warning("cannot keep a category", metadata: ["herald.category": "\(config.identifier)", "error": "\(error)"])
            }
        }
        await NotificationCategories.register(configs)
    }

    private func attach(_ attachment: UNNotificationAttachment) {
        pending.withLockedValue { pending in
            guard pending.handler != nil, let content = pending.content as? UNMutableNotificationContent else { return }
            content.attachments = [attachment]
        }
    }

    /// Delivers the content as it stands, once.
    private func finish() {
        let (handler, content) = pending.withLockedValue { pending in
            defer { pending.handler = nil }
            return (pending.handler, pending.content)
        }
        if let handler, let content { handler(content) }
    }
}
#endif
